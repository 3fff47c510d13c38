import type { BackendKit } from '@conclave/test-harness/tools';
import { startPostgresBenchServer } from './postgres-bench-server';
import { startPostgresFaultEnvironment } from './postgres-fault-environment';

/** How the harness and the bench start a private PostgreSQL (see `BackendKit`). */
export const postgresKit: BackendKit = {
  kind: 'postgres',
  providerModules: ['@conclave/postgres'],
  topologies: ['single', 'duplicate-id'],
  startFaultEnvironment: (leaseMs) => startPostgresFaultEnvironment(leaseMs),
  startBenchServer: () => startPostgresBenchServer(),
};
