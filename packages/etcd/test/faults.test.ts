import { describeFaultSuite } from '@conclave/test-harness';
import { etcdKit } from '@conclave/etcd/testing';

// Frozen leader, silent partition, the member crashed and restarted, and a seeded randomized
// fault run on a private single-member etcd (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the
// run's length).
describeFaultSuite(etcdKit, { seed: 1107 });
