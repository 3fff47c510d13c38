import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, quorumMinorityRestartScenario, safetyProblems, topologyFaultRunTest } from '@conclave/test-harness';
import { redisKit } from '@conclave/redis/testing';

// Redlock over three private masters without persistence (`redis://h1,h2,h3`), each candidate
// behind its own proxy to each master: a leader cut from one master while another restarts
// empty; then a seeded random run with minority restarts, per-master link faults and a frozen
// master (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets its length).

describe('redis quorum of three masters', () => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend: redisKit, topology: 'quorum', label: 'redis-quorum-directed' });
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  test('leader cut from one master while another restarts empty (cut or silent, slow link or not): nobody else gains a majority while it still leads', async () => {
    const c = cluster!;
    const victimWork: number[] = [];
    const recovered: boolean[] = [];
    for (const [cutServer, restartServer, how, slow] of [
      [2, 1, 'cut', false],
      [0, 2, 'cut', true],
      [2, 1, 'blackhole', false],
      [1, 0, 'blackhole', true],
    ] as const) {
      const o = await quorumMinorityRestartScenario(c, { cutServer, restartServer, how, slow });
      victimWork.push(o.victimWorkAfterSuccessor);
      recovered.push((await c.waitForLeader(c.leaseMs + c.env.recoveryMarginMs)) !== null);
    }
    const { detail, problems } = safetyProblems(c);
    expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
    expect(victimWork).toEqual([0, 0, 0, 0]);
    expect(recovered).toEqual([true, true, true, true]);
  }, 90_000);
});

describe('redis quorum under random faults', () => {
  topologyFaultRunTest(redisKit, 'quorum', { seed: 2205 });
});
