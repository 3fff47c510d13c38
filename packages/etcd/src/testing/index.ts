/**
 * `@conclave/etcd/testing`: private etcd members for tests, and this backend's kit for the test
 * harness and the bench. Never loaded by the package's main entry.
 */
export { ETCD_BINARY, startEtcd } from './etcd-server';
export type { EtcdCluster, EtcdMember, StartEtcdOptions } from './etcd-server';
export { etcdKit } from './etcd-kit';
