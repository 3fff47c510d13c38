import { describeBackendConformance } from '@conclave/test-harness';
import { EtcdBackend } from '@conclave/etcd';
import { privateEtcd } from './etcd-test-env';

// A private single-member etcd for this file; every candidate reaches it through a proxy of its
// own, so that `freeze` silences exactly one backend (its keep-alives too) until its lease lapses.
const etcd = privateEtcd();

describeBackendConformance('etcd', {
  profile: { candidates: true, changes: 'reliable', leaseEnds: false, leaderChanges: 'none', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: false, renewedAt: false, leaseEndsAt: false, transitions: false } },
  create: () => etcd.proxied(),
  freeze: (backend) => etcd.proxyOf(backend).blackhole(),
}, {
  // etcd TTLs are whole seconds, half a second shorter than the lease at least (EtcdBackend.ttlFor):
  // a 2.5 s lease is served by a 2 s TTL, which leaves room for replies delayed by a quarter lease.
  leaseMs: 2500,
});
