/**
 * Leader election on ZooKeeper: ephemeral sequential nodes, the lowest leads, each candidate
 * watches its predecessor; a lease is the client's session. Start with `ZookeeperBackend`.
 *
 * @module @conclave/zookeeper
 */
export { ZookeeperBackend } from './zookeeper-backend';
export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_ROOT,
  READ_ONLY_SESSION_TIMEOUT_MS,
  assertConnectString,
} from './zookeeper-options';
export type {
  ZookeeperAcl,
  ZookeeperBackendOptions,
  ZookeeperClient,
  ZookeeperClientOptions,
  ZookeeperConnectOptions,
} from './zookeeper-options';
export { ZOOKEEPER_URL_PARAMETERS, parseZookeeperUrl, zookeeperProvider } from './zookeeper-provider';
