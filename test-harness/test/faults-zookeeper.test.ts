import { describeFaultSuite } from '@conclave/test-harness';

// Frozen leader, silent partition and a seeded randomized fault run on a private zookeeper server
// (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeFaultSuite('zookeeper', {
  seed: 1009,
  knownLivenessBug: 'after a connection loss a candidate can end up queued behind its own orphaned node; nobody leads until its session ends',
});
