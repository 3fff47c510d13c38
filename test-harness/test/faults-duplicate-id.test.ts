import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, duplicateIdScenario, safetyProblems, topologyFaultRunTest, type FaultBackendKind } from '@conclave/test-harness';

// Two candidate processes started with one candidate id (a pod restarted under its old name while
// the old process still runs), next to a third candidate, on each backend's single private
// server: directed (the leading duplicate frozen, killed and replaced under the same id, stepped
// down) and a seeded random run. The checker tells the two apart by process, so if they share a
// term — or lead at once under two terms — it reports an overlap. FAULT_SEED=<n> replays a seed,
// FAULT_RUN_MS sets the run's length.

const backends: Array<{ backend: FaultBackendKind; seed: number }> = [
  { backend: 'mysql', seed: 2301 },
  { backend: 'redis', seed: 2302 },
  { backend: 'zookeeper', seed: 2303 },
];

describe.each(backends)('duplicate candidate id on $backend', ({ backend, seed }) => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend, topology: 'duplicate-id', label: `${backend}-duplicate-id` });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  test(`${backend}: two processes with one id never lead at once nor share a term`, async () => {
    const c = cluster!;
    const led = await duplicateIdScenario(c);
    const { detail, problems } = safetyProblems(c);
    expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
    expect(led).toBeGreaterThan(0);
  }, 120_000);

  topologyFaultRunTest(backend, 'duplicate-id', { seed, runMs: 20_000 });
});
