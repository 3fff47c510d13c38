import { randomBytes } from 'node:crypto';
import { Elector } from '@conclave/core';
import { MysqlBackend } from '@conclave/mysql';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { MigratingBackend, type MigrationPhase } from '@conclave/migrate';
import { delay, waitFor } from '@conclave/test-harness';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { LEASE_MS, MYSQL_URI, SESSION_TIMEOUT_MS, startTestZookeeper } from './migration-fixtures';

// Step 2: a dual candidate that cannot take MySQL (a to-only node leads) gives its ZooKeeper place
// back, so it must not take it again at once: that would spin (join, give back, woken by its own
// node's deletion, join again…). It looks again when MySQL's lease can end or MySQL pushes a
// change: about once per lease. A spinning candidate makes hundreds of campaigns in this window.
const WINDOW_MS = 3 * LEASE_MS;
const MAX_FROM_CAMPAIGNS = 3 * (WINDOW_MS / LEASE_MS) + 2;

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

test(`a dual follower beside a to-only leader campaigns on ZooKeeper at most ${MAX_FROM_CAMPAIGNS} times in ${WINDOW_MS} ms`, async () => {
  const election = `step2-quiet-${randomBytes(4).toString('hex')}`;
  const backend = (phase: MigrationPhase) =>
    new MigratingBackend({
      from: new ZookeeperBackend({ connect: zk.connect, sessionTimeoutMs: SESSION_TIMEOUT_MS }),
      to: new MysqlBackend({ uri: MYSQL_URI }),
      phase,
    });
  const toOnly = backend('to-only');
  const dual = backend('dual');
  let fromCampaigns = 0;
  const campaignOnFrom = dual.from.campaign.bind(dual.from);
  dual.from.campaign = (request) => {
    fromCampaigns++;
    return campaignOnFrom(request);
  };
  const leader = new Elector({ backend: toOnly, election, candidateId: 'to-only-1', leaseMs: LEASE_MS });
  const follower = new Elector({ backend: dual, election, candidateId: 'dual-2', leaseMs: LEASE_MS });
  try {
    await leader.start();
    await waitFor(() => leader.isLeader(), 'the to-only candidate to lead');
    await follower.start();
    await delay(WINDOW_MS);
    expect(follower.isLeader()).toBe(false);
    expect(fromCampaigns).toBeLessThanOrEqual(MAX_FROM_CAMPAIGNS);
    // It still takes over when the to-only leader goes (woken by MySQL, or when the lease ends).
    await leader.stop();
    await waitFor(() => follower.isLeader(), 'the dual candidate to lead', 2 * LEASE_MS);
  } finally {
    await follower.stop();
    await leader.stop();
    await Promise.all([dual.close(), toOnly.close()]);
  }
});
