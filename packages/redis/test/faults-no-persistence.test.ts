import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, emptyRestartScenario, safetyProblems, topologyFaultRunTest } from '@conclave/test-harness';
import { redisKit } from '@conclave/redis/testing';

// One Redis master without persistence (`--save "" --appendonly no`), crashed while a candidate
// leads and restarted empty; then a seeded random run on it (FAULT_SEED=<n> replays a seed,
// FAULT_RUN_MS sets its length).

describe('redis without persistence: the master restarts empty', () => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend: redisKit, topology: 'no-persistence', label: 'redis-empty-restart' });
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  test('crash while leading, back empty after 1.5 s, 0.3 s and 0.8 s (twice each, once with a slow leader): never two leaders, a leader within the bound', async () => {
    const c = cluster!;
    const bound = c.leaseMs + c.env.recoveryMarginMs;
    const waits = await emptyRestartScenario(c, [1500, 1500, 300, 300, 800, 800], 0, bound + 5000);
    const { detail, problems } = safetyProblems(c);
    expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
    expect(waits.map((w) => w !== null && w <= bound)).toEqual(waits.map(() => true));
  }, 90_000);
});

describe('redis without persistence under random faults', () => {
  topologyFaultRunTest(redisKit, 'no-persistence', { seed: 2105 });
});
