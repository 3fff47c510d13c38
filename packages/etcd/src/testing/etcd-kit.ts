import type { BackendKit } from '@conclave/test-harness/tools';
import { startEtcdFaultEnvironment } from './etcd-fault-environment';

/** How the harness and the bench start private etcd members (see `BackendKit`). */
export const etcdKit: BackendKit = {
  kind: 'etcd',
  providerModules: ['@conclave/etcd'],
  topologies: ['single', 'ensemble', 'duplicate-id'],
  startFaultEnvironment: startEtcdFaultEnvironment,
  // TTLs are whole seconds: a lease of leaseMs is granted floor(leaseMs / 1000) s.
  grantedLeaseMs: (leaseMs) => Math.floor(leaseMs / 1000) * 1000,
};
