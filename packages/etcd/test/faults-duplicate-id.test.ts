import { describeDuplicateIdFaults } from '@conclave/test-harness';
import { etcdKit } from '@conclave/etcd/testing';

// Two candidate processes with one candidate id (a pod restarted under its old name while the old
// process still runs) next to a third, on a private single-member etcd: directed and a seeded
// random run (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeDuplicateIdFaults(etcdKit, { seed: 2304 });
