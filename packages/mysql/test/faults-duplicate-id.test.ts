import { describeDuplicateIdFaults } from '@conclave/test-harness';
import { mysqlKit } from '@conclave/mysql/testing';

// Two candidate processes with one candidate id (a pod restarted under its old name while the old
// process still runs) next to a third, on a private server: directed and a seeded random run
// (FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length).
describeDuplicateIdFaults(mysqlKit, { seed: 2301 });
