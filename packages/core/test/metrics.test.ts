import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { Elector, MemoryBackend, silentLogger, type ElectorMetricsOptions } from '@conclave/core';
import { HangableBackend } from '@conclave/test-harness';

/** A real SDK pipeline that exports to memory when flushed. */
function sdk() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: the test flushes by hand, and shutdown() clears the timer.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const collect = async (): Promise<{ scope: { name: string; version?: string }; metrics: MetricData[] }> => {
    await provider.forceFlush();
    const scopes = exporter.getMetrics().at(-1)?.scopeMetrics ?? [];
    exporter.reset();
    const scope = scopes.find((s) => s.scope.name === '@conclave/core');
    if (!scope) throw new Error('no @conclave/core meter exported');
    return { scope: scope.scope, metrics: scope.metrics };
  };
  return { provider, collect };
}

const find = (metrics: MetricData[], name: string) => {
  const m = metrics.find((x) => x.descriptor.name === name);
  if (!m) throw new Error(`no ${name} among ${metrics.map((x) => x.descriptor.name).join(', ')}`);
  return m;
};

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function leaderWith(metrics: ElectorMetricsOptions, election = 'metrics-demo') {
  const e = new Elector({ backend: new MemoryBackend(), election, candidateId: 'a', leaseMs: 60_000, logger: silentLogger, metrics });
  cleanup.push(() => e.stop());
  await e.start();
  expect(e.isLeader()).toBe(true);
  return e;
}

describe('metrics', () => {
  test('the meter carries the package name and version', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    await leaderWith({ meterProvider: provider });
    const { scope } = await collect();
    expect(scope.name).toBe('@conclave/core');
    expect(scope.version).toBe(require('../package.json').version);
  });

  test('instruments have conventional names, units and kinds; durations are in seconds', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    await leaderWith({ meterProvider: provider });
    const { metrics } = await collect();
    const names = metrics.map((m) => [m.descriptor.name, m.descriptor.unit, m.dataPointType]);
    expect(names).toEqual(
      expect.arrayContaining([
        ['conclave.transitions', '{transition}', DataPointType.SUM],
        ['conclave.backend.call.duration', 's', DataPointType.HISTOGRAM],
        ['conclave.lease.remaining', 's', DataPointType.GAUGE],
      ]),
    );
    expect(metrics.map((m) => m.descriptor.name).sort()).toEqual(
      ['conclave.backend.call.duration', 'conclave.lease.remaining', 'conclave.transitions'],
    );
    const gauge = find(metrics, 'conclave.lease.remaining').dataPoints[0]!;
    // A 60 s lease: in seconds the value is under 60, in ms it would be near 60 000.
    expect(gauge.value).toBeGreaterThan(50);
    expect(gauge.value).toBeLessThanOrEqual(60);
    const call = find(metrics, 'conclave.backend.call.duration').dataPoints[0]!;
    expect((call.value as { max?: number }).max).toBeLessThan(1);
  });

  test('a successful call has kind and operation and no error.type; transitions have role', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    await leaderWith({ meterProvider: provider });
    const { metrics } = await collect();
    expect(find(metrics, 'conclave.backend.call.duration').dataPoints.map((p) => p.attributes)).toEqual([
      { 'conclave.backend.kind': 'memory', 'conclave.operation.name': 'campaign' },
    ]);
    expect(find(metrics, 'conclave.transitions').dataPoints.map((p) => p.attributes)).toEqual(
      expect.arrayContaining([{ 'conclave.role': 'follower' }, { 'conclave.role': 'leader' }]),
    );
  });

  test('a failed call is recorded on the duration histogram with error.type, and no errors counter exists', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    const backend = new HangableBackend(new MemoryBackend());
    backend.failCalls();
    const e = new Elector({ backend, election: 'metrics-fail', leaseMs: 600, logger: silentLogger, metrics: { meterProvider: provider } });
    cleanup.push(() => e.stop());
    await e.start();
    const { metrics } = await collect();
    expect(find(metrics, 'conclave.backend.call.duration').dataPoints.map((p) => p.attributes)).toEqual([
      { 'conclave.backend.kind': 'memory', 'conclave.operation.name': 'campaign', 'error.type': 'BACKEND_UNAVAILABLE' },
    ]);
    expect(metrics.some((m) => /error/.test(m.descriptor.name))).toBe(false);
  });

  test('the election attribute is absent by default, so 2 500 elections make no more attribute sets than one', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    const backend = new MemoryBackend();
    const many = Array.from(
      { length: 2500 },
      (_, i) => new Elector({ backend, election: `job-${i}`, candidateId: 'a', leaseMs: 60_000, logger: silentLogger, metrics: { meterProvider: provider } }),
    );
    cleanup.push(() => Promise.all(many.map((e) => e.stop())));
    await Promise.all(many.map((e) => e.start()));
    const { metrics } = await collect();
    for (const m of metrics) {
      for (const p of m.dataPoints) expect(Object.keys(p.attributes)).not.toContain('conclave.election');
    }
    expect(find(metrics, 'conclave.backend.call.duration').dataPoints).toHaveLength(1);
    expect(find(metrics, 'conclave.lease.remaining').dataPoints).toHaveLength(1);
    const transitions = find(metrics, 'conclave.transitions').dataPoints;
    expect(transitions.find((p) => p.attributes['conclave.role'] === 'leader')?.value).toBe(2500);
  });

  test('electionAttribute: true labels every instrument with conclave.election', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    await leaderWith({ meterProvider: provider, electionAttribute: true }, 'one');
    await leaderWith({ meterProvider: provider, electionAttribute: true }, 'two');
    const { metrics } = await collect();
    for (const name of ['conclave.transitions', 'conclave.backend.call.duration', 'conclave.lease.remaining']) {
      const elections = new Set(find(metrics, name).dataPoints.map((p) => p.attributes['conclave.election']));
      expect([name, [...elections].sort()]).toEqual([name, ['one', 'two']]);
    }
  });

  test('a metrics option that is not an object, or an electionAttribute that is not a boolean, is INVALID_OPTIONS', () => {
    const backend = new MemoryBackend();
    expect(() => new Elector({ backend, election: 'x', metrics: 'on' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => new Elector({ backend, election: 'x', metrics: { electionAttribute: 'yes' as never } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  test('the lease gauge stops reporting once the leader stops', async () => {
    const { provider, collect } = sdk();
    cleanup.push(() => provider.shutdown());
    const e = await leaderWith({ meterProvider: provider });
    await e.stop();
    const { metrics } = await collect();
    expect(metrics.find((m) => m.descriptor.name === 'conclave.lease.remaining')?.dataPoints ?? []).toEqual([]);
  });
});
