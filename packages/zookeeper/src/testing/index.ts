/**
 * `@conclave/zookeeper/testing`: private ZooKeeper servers and ensembles for tests, and this
 * backend's kit for the test harness and the bench. Never loaded by the package's main entry.
 */
export { startZookeeperServer, startZookeeperEnsemble } from './zookeeper-server';
export { fourLetterWord, zookeeperClasspath } from './zookeeper-jvm';
export type { ZookeeperEnsemble, ZookeeperEnsembleOptions, ZookeeperServer, ZookeeperServerOptions } from './zookeeper-server-types';
export { ENSEMBLE_ELECTION_MS, zookeeperSessionTimeoutMs } from './zookeeper-fault-timing';
export { zookeeperKit } from './zookeeper-kit';
