import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, ensembleScenario, safetyProblems, topologyFaultRunTest } from '@conclave/test-harness';
import { zookeeperKit } from '@conclave/zookeeper/testing';

// A ZooKeeper ensemble of three, each candidate behind its own proxy to each server: a server
// isolated from its peers while its clients still reach it, the ensemble's leader killed and
// restarted, a client cut from its server; then a seeded random run (FAULT_SEED=<n> replays a
// seed, FAULT_RUN_MS sets its length).

describe('zookeeper ensemble of three', () => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend: zookeeperKit, topology: 'ensemble', label: 'zookeeper-ensemble-directed' });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  test('isolated server, ensemble leader restarted, client cut from its server: never two leaders, a leader after each', async () => {
    const c = cluster!;
    const bound = c.leaseMs + c.env.recoveryMarginMs;
    const { steps, waits } = await ensembleScenario(c, bound);
    const { detail, problems } = safetyProblems(c);
    expect({ detail, steps, ...problems }).toEqual({ detail, steps, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
    expect({ steps, recovered: waits.map((w) => w !== null && w <= bound) }).toEqual({ steps, recovered: waits.map(() => true) });
  }, 150_000);
});

describe('zookeeper ensemble under random faults', () => {
  topologyFaultRunTest(zookeeperKit, 'ensemble', { seed: 2409 });
});
