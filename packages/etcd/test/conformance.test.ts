import { describeBackendConformance } from '@conclave/test-harness';
import { EtcdBackend } from '@conclave/etcd';
import { privateEtcd } from './etcd-test-env';

// A private single-member etcd for this file; every candidate reaches it through a proxy of its
// own, so that `freeze` silences exactly one backend (its keep-alives too) until its lease lapses.
const etcd = privateEtcd();

describeBackendConformance('etcd', {
  capabilities: EtcdBackend.capabilities,
  create: () => etcd.proxied(),
  freeze: (backend) => etcd.proxyOf(backend).blackhole(),
}, {
  // etcd TTLs are whole seconds: a 2 s lease is granted whole (a 1.5 s one only 1 s, see lease.test.ts).
  leaseMs: 2000,
});
