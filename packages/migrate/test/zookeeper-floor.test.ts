import { randomBytes } from 'node:crypto';
import type { CampaignResult, ElectionBackend } from '@conclave/core/spi';
import { MigratingBackend } from '@conclave/migrate';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { OwnedBackends, startTestZookeeper } from './migration-fixtures';

// ZooKeeper raises its token floor, so a migration to ZooKeeper, and a rollback to ZooKeeper-only
// processes, keep one increasing token sequence even when the other side's tokens are far above
// ZooKeeper's czxids. Call by call, on a real ZooKeeper and the real MariaDB.

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

const owned = new OwnedBackends();
afterEach(() => owned.closeAll());
const keep = <T extends ElectionBackend>(b: T): T => owned.keep(b);
const zookeeper = () => owned.zookeeper(zk);
const mysql = () => owned.mysql();
const LEASE = 1500;
// Far above any czxid of the private server.
const FAR = 10_000_000_000_000;

function tokenOf(result: CampaignResult): number {
  if (result.role !== 'leader') throw new Error(`expected to lead, got ${JSON.stringify(result)}`);
  return result.token;
}

test('MySQL → ZooKeeper: dual terms go above MySQL tokens far above the czxids, and old and to-only leaders follow', async () => {
  const election = `to-zk-${randomBytes(4).toString('hex')}`;
  const old = mysql();
  await old.tokenFloor!.raise(election, FAR);
  const before = tokenOf(await old.campaign({ election, candidateId: 'old', leaseMs: LEASE }));
  expect(before).toBeGreaterThan(FAR);
  await old.release({ election, candidateId: 'old' });
  const dual = keep(new MigratingBackend({ from: mysql(), to: zookeeper(), phase: 'dual', closeBackends: false }));
  const dualToken = tokenOf(await dual.campaign({ election, candidateId: 'dual', leaseMs: LEASE }));
  expect(dualToken).toBeGreaterThan(before);
  await dual.release({ election, candidateId: 'dual' });
  // An old MySQL-only leader after it (from's floor was raised to the dual token).
  const oldAgain = tokenOf(await old.campaign({ election, candidateId: 'old', leaseMs: LEASE }));
  expect(oldAgain).toBeGreaterThan(dualToken);
  await old.release({ election, candidateId: 'old' });
  // A dual leader again, then a to-only (ZooKeeper) leader.
  const dual2 = tokenOf(await dual.campaign({ election, candidateId: 'dual', leaseMs: LEASE }));
  expect(dual2).toBeGreaterThan(oldAgain);
  await dual.release({ election, candidateId: 'dual' });
  const toOnly = keep(new MigratingBackend({ from: mysql(), to: zookeeper(), phase: 'to-only', closeBackends: false }));
  const last = tokenOf(await toOnly.campaign({ election, candidateId: 'new', leaseMs: LEASE }));
  expect(last).toBeGreaterThan(dual2);
  await toOnly.release({ election, candidateId: 'new' });
});

test('rollback to ZooKeeper-only: after dual terms on MySQL tokens far above the czxids, old ZooKeeper leaders go above them', async () => {
  const election = `back-to-zk-${randomBytes(4).toString('hex')}`;
  // MySQL's sequence far ahead (to-only terms of a migration that is being rolled back).
  const toOnly = mysql();
  await toOnly.tokenFloor!.raise(election, FAR);
  const high = tokenOf(await toOnly.campaign({ election, candidateId: 'new', leaseMs: LEASE }));
  await toOnly.release({ election, candidateId: 'new' });
  const dual = keep(new MigratingBackend({ from: zookeeper(), to: mysql(), phase: 'dual', closeBackends: false }));
  const dualToken = tokenOf(await dual.campaign({ election, candidateId: 'dual', leaseMs: LEASE }));
  expect(dualToken).toBeGreaterThan(high);
  await dual.release({ election, candidateId: 'dual' });
  const old = zookeeper();
  const oldToken = tokenOf(await old.campaign({ election, candidateId: 'old', leaseMs: LEASE }));
  expect(oldToken).toBeGreaterThan(dualToken);
  expect(await old.getLeader(election)).toMatchObject({ candidateId: 'old', token: oldToken });
  await old.release({ election, candidateId: 'old' });
});
