export { EtcdBackend, MAX_FLOOR } from './etcd-backend';
export { DEFAULT_PREFIX, DEFAULT_REQUEST_TIMEOUT_MS, ETCD_URL_PARAMETERS, assertPrefix, parseEtcdUrl, resolveEtcdOptions } from './etcd-options';
export type { EtcdBackendOptions, EtcdClient, EtcdClientOptions, EtcdHostsOptions } from './etcd-options';
export { etcdProvider } from './etcd-provider';
