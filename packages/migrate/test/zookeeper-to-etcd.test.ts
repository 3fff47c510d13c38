import { EtcdBackend } from '@conclave/etcd';
import { startEtcd, type EtcdCluster } from '@conclave/etcd/testing';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { startTestZookeeper, zookeeperBackend, type MigrationPair } from './migration-fixtures';
import { migrateForwardAndBack } from './forward-and-back';

// From one consensus store to the other: a private ZooKeeper to a private etcd, forward and back
// (see forward-and-back.ts). ZooKeeper's tokens (its sequence numbers) and etcd's (create
// revisions) count separately; a dual leader raises each store's token floor above the other's.
let zk: ZookeeperServer;
let etcd: EtcdCluster;
beforeAll(async () => {
  [zk, etcd] = await Promise.all([startTestZookeeper(), startEtcd()]);
}, 90_000);
afterAll(async () => {
  await Promise.all([zk?.close(), etcd?.stop()]);
});

const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);

test(`ZooKeeper → etcd, forward and back, never has two leaders and tokens only go up (seed ${seed})`, async () => {
  const pair: MigrationPair = {
    oldKind: 'zookeeper',
    from: () => zookeeperBackend(zk),
    to: () => new EtcdBackend({ hosts: etcd.members.map((m) => `127.0.0.1:${m.port}`), requestTimeoutMs: 3000 }),
  };
  await migrateForwardAndBack(pair, seed);
});
