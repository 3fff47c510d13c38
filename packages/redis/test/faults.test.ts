import { describeFaultSuite } from '@conclave/test-harness';
import { redisKit } from '@conclave/redis/testing';

// Frozen leader, silent partition and a seeded randomized fault run on a private redis server
// (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeFaultSuite(redisKit, { seed: 1005 });
