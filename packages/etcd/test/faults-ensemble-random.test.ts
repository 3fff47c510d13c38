import { describe } from '@jest/globals';
import { topologyFaultRunTest } from '@conclave/test-harness';
import { etcdKit } from '@conclave/etcd/testing';

// An etcd cluster of three under seeded random faults: members killed and restarted (the Raft
// leader more often), frozen, isolated from their peers while their clients still reach them, a
// candidate's link to one member cut or silent, and the single-candidate faults (FAULT_SEED=<n>
// replays a seed, FAULT_RUN_MS sets its length).
describe('etcd cluster of three under random faults', () => {
  topologyFaultRunTest(etcdKit, 'ensemble', { seed: 2410 });
});
