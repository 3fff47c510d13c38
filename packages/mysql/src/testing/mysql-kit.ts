import type { BackendKit } from '@conclave/test-harness/tools';
import { startMysqlBenchServer } from './mysql-bench-server';
import { startMysqlFaultEnvironment } from './mysql-fault-environment';
import { startMysqlReplicatedEnvironment } from './mysql-replicated-environment';

/** How the harness and the bench start a private MariaDB (see `BackendKit`). */
export const mysqlKit: BackendKit = {
  kind: 'mysql',
  providerModules: ['@conclave/mysql'],
  topologies: ['single', 'duplicate-id', 'replicated'],
  // The guarded resource on the shared MariaDB: a MySQL user's own store.
  guard: 'mysql',
  startFaultEnvironment: (leaseMs, topology) =>
    topology === 'replicated' ? startMysqlReplicatedEnvironment(leaseMs) : startMysqlFaultEnvironment(leaseMs),
  startBenchServer: () => startMysqlBenchServer(),
};
