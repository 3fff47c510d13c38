import { describeFaultSuite } from '@conclave/test-harness';
import { mysqlKit } from '@conclave/mysql/testing';

// Frozen leader, silent partition and a seeded randomized fault run on a private mysql server
// (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeFaultSuite(mysqlKit, { seed: 1105 });
