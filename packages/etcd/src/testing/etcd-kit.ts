import type { BackendKit } from '@conclave/test-harness/tools';
import { EtcdBackend } from '../etcd-backend';
import { startEtcdBenchServer } from './etcd-bench-server';
import { startEtcdFaultEnvironment } from './etcd-fault-environment';

/** How the harness and the bench start private etcd members (see `BackendKit`). */
export const etcdKit: BackendKit = {
  kind: 'etcd',
  providerModules: ['@conclave/etcd'],
  topologies: ['single', 'ensemble', 'duplicate-id'],
  startFaultEnvironment: startEtcdFaultEnvironment,
  startBenchServer: startEtcdBenchServer,
  // No grantedLeaseMs: the grant the Elector reports (the TTL, EtcdBackend.ttlFor) is the server's
  // lease, which etcd ends up to 500 ms late; there is no longer lease on the server to add back.
  followerAllowance: (leaseMs) => {
    // Every candidate's key lives on its process's lease, kept alive every third of the TTL
    // (etcd-leases.ts): keep-alive, not polling.
    const keepAlives = 3 / Math.max(1, EtcdBackend.ttlFor(leaseMs));
    return { maxPerSec: keepAlives * 1.15, target: `no polling (lease keep-alives ≈ ${keepAlives.toFixed(2)}/s allowed)` };
  },
};
