/**
 * Leader election on etcd: keys attached to an etcd lease, the lowest create revision leads,
 * each candidate watches its predecessor. Start with `EtcdBackend`.
 *
 * @module @conclave/etcd
 */
export { EtcdBackend, MAX_FLOOR } from './etcd-backend';
export { DEFAULT_PREFIX, DEFAULT_REQUEST_TIMEOUT_MS, ETCD_URL_PARAMETERS, assertPrefix, parseEtcdUrl, resolveEtcdOptions } from './etcd-options';
export type { EtcdBackendOptions, EtcdClient, EtcdClientOptions, EtcdHostsOptions } from './etcd-options';
export { etcdProvider } from './etcd-provider';
