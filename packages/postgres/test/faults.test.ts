import { describeFaultSuite } from '@conclave/test-harness';
import { postgresKit } from '@conclave/postgres/testing';

// Frozen leader, silent partition and a seeded randomized fault run on a private PostgreSQL
// (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeFaultSuite(postgresKit, { seed: 1105 });
