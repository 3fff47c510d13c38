import type { BackendKit } from '@conclave/test-harness/tools';
import { startPostgresBenchServer } from './postgres-bench-server';
import { startPostgresFaultEnvironment } from './postgres-fault-environment';
import { startPostgresReplicatedEnvironment } from './postgres-replicated-environment';

/** How the harness and the bench start a private PostgreSQL (see `BackendKit`). */
export const postgresKit: BackendKit = {
  kind: 'postgres',
  providerModules: ['@conclave/postgres'],
  topologies: ['single', 'duplicate-id', 'replicated'],
  startFaultEnvironment: (leaseMs, topology) =>
    topology === 'replicated' ? startPostgresReplicatedEnvironment(leaseMs) : startPostgresFaultEnvironment(leaseMs),
  startBenchServer: () => startPostgresBenchServer(),
};
