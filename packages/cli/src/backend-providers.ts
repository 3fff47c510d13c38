import { memoryProvider, type BackendProvider } from '@conclave/core';
import { etcdProvider } from '@conclave/etcd';
import { migrateProvider } from '@conclave/migrate';
import { mysqlProvider } from '@conclave/mysql';
import { postgresProvider } from '@conclave/postgres';
import { redisProvider } from '@conclave/redis';
import { zookeeperProvider } from '@conclave/zookeeper';

/**
 * The backends the `conclave` command knows, in the order an unknown scheme's message lists
 * them. A backend is registered here by two lines, its import and its entry; its URL parsing
 * lives in its own package.
 */
export const BUILT_IN_PROVIDERS: readonly BackendProvider[] = [
  memoryProvider,
  mysqlProvider,
  postgresProvider,
  redisProvider,
  zookeeperProvider,
  etcdProvider,
  migrateProvider,
];
