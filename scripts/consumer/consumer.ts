// A user's program, built from the packed packages in a scratch project (see
// scripts/test/consumer.test.ts): one election on Redis, one on MySQL, metrics through the
// OpenTelemetry SDK's in-memory exporter, the CLI package's URL parser. Prints the tokens and
// the names of the metrics that arrived, as JSON.
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { createBackend } from '@conclave/cli';
import { Elector, type ElectionBackend } from '@conclave/core';
import type { MigratingBackendOptions } from '@conclave/migrate';
import { MysqlBackend } from '@conclave/mysql';
import { RedisBackend } from '@conclave/redis';
import type { ZookeeperBackendOptions } from '@conclave/zookeeper';
import { Redis } from 'ioredis';
import { createPool } from 'mysql2';

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// A long interval: only the forceFlush below exports.
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

async function lead(backend: ElectionBackend, election: string): Promise<number> {
  const elector = new Elector({ backend, election, leaseMs: 3_000 });
  await elector.start();
  if (!elector.isLeader()) throw new Error(`not elected on ${backend.kind}`);
  const token = elector.token;
  await elector.stop();
  if (token === null) throw new Error('no token');
  return token;
}

async function main(): Promise<void> {
  const election = `consumer-${process.pid}-${Date.now()}`;

  const client = new Redis(process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const redis = new RedisBackend({ client });
  const pool = createPool({ uri: process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test', multipleStatements: true });
  const mysql = new MysqlBackend({ pool });
  // Compiled only: the other packages' options under the same strict settings.
  const typed: [ZookeeperBackendOptions, MigratingBackendOptions] = [
    { connect: '127.0.0.1:2181', root: '/conclave' },
    { from: redis, to: mysql, phase: 'dual', closeBackends: false },
  ];
  void typed;
  // The command's URL parser, from a CommonJS program.
  const memory = createBackend('memory:');
  await memory.close();
  if (memory.kind !== 'memory') throw new Error(`createBackend gave ${memory.kind}`);
  try {
    const tokens = [await lead(redis, election), await lead(mysql, election)];
    await reader.forceFlush();
    const names = new Set<string>();
    for (const batch of exporter.getMetrics()) {
      for (const scope of batch.scopeMetrics) for (const metric of scope.metrics) names.add(metric.descriptor.name);
    }
    console.log(JSON.stringify({ tokens, metrics: [...names].sort() }));
  } finally {
    await redis.close();
    await mysql.close();
    client.disconnect();
    await new Promise<void>((resolve) => pool.end(() => resolve()));
    await reader.shutdown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
