import { describe } from '@jest/globals';
import { describeDirectedEnsemble, topologyFaultRunTest } from '@conclave/test-harness';
import { zookeeperKit } from '@conclave/zookeeper/testing';

// A ZooKeeper ensemble of three, each candidate behind its own proxy to each server: a server
// isolated from its peers while its clients still reach it, the ensemble's leader killed and
// restarted, a client cut from its server; then a seeded random run (FAULT_SEED=<n> replays a
// seed, FAULT_RUN_MS sets its length).

describeDirectedEnsemble(zookeeperKit, {
  title: 'zookeeper ensemble of three',
  testName: 'isolated server, ensemble leader restarted, client cut from its server: never two leaders, a leader after each',
});

describe('zookeeper ensemble under random faults', () => {
  topologyFaultRunTest(zookeeperKit, 'ensemble', { seed: 2409 });
});
