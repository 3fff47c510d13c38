import { startMariadb, type MariadbServer } from '@conclave/mysql/testing';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import type { FaultEnvironmentCore } from '@conclave/test-harness/tools';

/**
 * The kinds of process a ZooKeeper → MySQL migration deploys, in rollout order: the old binary
 * (a plain ZooKeeper URL), `dual`, `to-only` (`migrate:<phase>?from=…&to=…`).
 */
export const MIGRATION_NODE_KINDS = ['old', 'dual', 'to-only'] as const;

/** Index of each server in the environment (and of each candidate's link to it). */
export const MIGRATION_ZOOKEEPER = 0;
export const MIGRATION_MYSQL = 1;

/**
 * The servers of a migration fault run: a private ZooKeeper (the `from` side) and a private
 * MariaDB (the `to` side), so a run may cut, freeze or crash either without touching the shared
 * servers. A candidate's URL depends on its kind; every kind but `old` reaches both servers.
 */
export async function startMigrationServers(
  sessionTimeoutMs: number,
): Promise<Pick<FaultEnvironmentCore, 'servers' | 'urlFor' | 'nodeKinds' | 'restartLosesState' | 'close'>> {
  const started = await Promise.allSettled([startZookeeperServer(), startMariadb()]);
  const [zkResult, dbResult] = started;
  if (zkResult.status === 'rejected' || dbResult.status === 'rejected') {
    if (zkResult.status === 'fulfilled') await zkResult.value.close();
    if (dbResult.status === 'fulfilled') await dbResult.value.stop();
    throw (zkResult.status === 'rejected' ? zkResult.reason : (dbResult as PromiseRejectedResult).reason) as Error;
  }
  const zk: ZookeeperServer = zkResult.value;
  const db: MariadbServer = dbResult.value;
  let closed = false;
  return {
    servers: [
      { index: MIGRATION_ZOOKEEPER, label: 'zookeeper', port: zk.port, kill: () => zk.kill(), restart: () => zk.start() },
      {
        index: MIGRATION_MYSQL,
        label: 'mysql',
        port: db.port,
        kill: () => db.kill(),
        restart: () => db.restart(),
        pause: () => db.pause(),
        resume: () => db.resume(),
      },
    ],
    nodeKinds: MIGRATION_NODE_KINDS,
    urlFor(ports, nodeKind = 'old') {
      const from = `zookeeper://127.0.0.1:${ports[MIGRATION_ZOOKEEPER]}?sessionTimeoutMs=${sessionTimeoutMs}`;
      if (nodeKind === 'old') return from;
      if (nodeKind !== 'dual' && nodeKind !== 'to-only') throw new Error(`harness: no migration node kind ${JSON.stringify(nodeKind)}`);
      const to = `mysql://root@127.0.0.1:${ports[MIGRATION_MYSQL]}/test`;
      return `migrate:${nodeKind}?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    },
    restartLosesState: false,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([zk.close(), db.stop()]);
    },
  };
}
