// A user's program, built from the packed packages in a scratch project (see
// scripts/test/consumer.test.ts): one election on each backend (ZooKeeper and etcd where the test
// gives their addresses), each with the user's own driver client, metrics through the
// OpenTelemetry SDK's in-memory exporter, the CLI package's URL parser. Prints the tokens by
// backend and the names of the metrics that arrived, as JSON.
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { createBackend } from '@conclave/cli';
import { Elector, type ElectionBackend } from '@conclave/core';
import { EtcdBackend } from '@conclave/etcd';
import type { MigratingBackendOptions } from '@conclave/migrate';
import { MysqlBackend } from '@conclave/mysql';
import { PostgresBackend } from '@conclave/postgres';
import { RedisBackend } from '@conclave/redis';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { createPool } from 'mysql2';
import { Pool } from 'pg';

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
  if (token === null) throw new Error(`no token on ${backend.kind}`);
  return token;
}

/** A backend over a client the program made, and how to let go of that client after the backend. */
interface Opened {
  backend: ElectionBackend;
  end(): Promise<void> | void;
}

function open(env: NodeJS.ProcessEnv): Opened[] {
  const redis = new Redis(env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const mysql = createPool({ uri: env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test', multipleStatements: true });
  const postgres = new Pool({ connectionString: env.CONCLAVE_POSTGRES_URI ?? 'postgres://root@127.0.0.1:5432/test' });
  const opened: Opened[] = [
    { backend: new RedisBackend({ client: redis }), end: () => redis.disconnect() },
    { backend: new MysqlBackend({ pool: mysql }), end: () => new Promise<void>((resolve) => mysql.end(() => resolve())) },
    { backend: new PostgresBackend({ pool: postgres }), end: () => postgres.end() },
  ];
  if (env.CONCLAVE_ZOOKEEPER_CONNECT) {
    opened.push({ backend: new ZookeeperBackend({ connect: env.CONCLAVE_ZOOKEEPER_CONNECT, sessionTimeoutMs: 4_000 }), end: () => undefined });
  }
  if (env.CONCLAVE_ETCD_HOSTS) {
    const etcd = new Etcd3({ hosts: env.CONCLAVE_ETCD_HOSTS.split(',') });
    opened.push({ backend: new EtcdBackend({ client: etcd }), end: () => etcd.close() });
  }
  return opened;
}

async function main(): Promise<void> {
  const election = `consumer-${process.pid}-${Date.now()}`;
  // Compiled only: the migration's options under the same strict settings.
  const typed: MigratingBackendOptions = { from: createBackend('memory:'), to: createBackend('memory:'), phase: 'dual', closeBackends: false };
  void typed;
  // The command's URL parser, from a CommonJS program.
  const memory = createBackend('memory:');
  await memory.close();
  if (memory.kind !== 'memory') throw new Error(`createBackend gave ${memory.kind}`);

  const opened = open(process.env);
  const tokens: Record<string, number> = {};
  try {
    for (const { backend } of opened) tokens[backend.kind] = await lead(backend, election);
    await reader.forceFlush();
    const names = new Set<string>();
    for (const batch of exporter.getMetrics()) {
      for (const scope of batch.scopeMetrics) for (const metric of scope.metrics) names.add(metric.descriptor.name);
    }
    console.log(JSON.stringify({ tokens, metrics: [...names].sort() }));
  } finally {
    for (const { backend, end } of opened) {
      await backend.close();
      await end();
    }
    await reader.shutdown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
