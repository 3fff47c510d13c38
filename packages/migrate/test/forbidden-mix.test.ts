import { performance } from 'node:perf_hooks';
import { MysqlBackend } from '@conclave/mysql';
import { checkSplitBrain, delay, waitFor } from '@conclave/test-harness';
import { startTcpProxy } from '@conclave/test-harness/tools';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { LEASE_MS, MixedFleet, MYSQL_URI, zookeeperBackend, zookeeperToMysql, SESSION_TIMEOUT_MS, startTestZookeeper } from './migration-fixtures';

// The mix the rollout must never run: old ZooKeeper-only nodes beside to-only nodes (they share
// no lease). A to-only candidate starts no term on MySQL while ZooKeeper shows a leader, and the
// same ZooKeeper term for a whole lease is an old node (a dual one gives ZooKeeper back within
// half a lease when it cannot take MySQL): it then refuses to lead with MIGRATION_CONFLICT and
// reports it in health(). Only an old node started beside a to-only *leader* leads beside it,
// until that leader finds it.
//
// Bound for that case: the old node's term is first seen within a renewal (a third of a lease)
// plus half a lease, confirmed a lease and up to a renewal later, and the next renewal gives
// MySQL back: 2.5 leases; 3 leave room for the round trips.
const DETECT_BOUND_MS = 3 * LEASE_MS;
// The conflict is reported once the same term has lasted longer than a dead candidate's node can
// stay (the session timeout) plus a lease, from a sighting within a renewal and half a lease of
// the old node's start, and found by a look up to half a lease later: the session timeout +
// 2.33 leases; 3 leave room for the round trips.
const REPORT_BOUND_MS = SESSION_TIMEOUT_MS + 3 * LEASE_MS;

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

test(`a to-only leader that finds an old ZooKeeper node leading steps down within ${DETECT_BOUND_MS} ms and refuses to lead while it runs`, async () => {
  const fleet = new MixedFleet(zookeeperToMysql(zk));
  try {
    const toOnly = await fleet.add('to-only');
    await waitFor(() => toOnly.isLeader(), 'the to-only candidate to lead', 20_000);
    const oldStartedAt = performance.now();
    const old = await fleet.add('old');
    await waitFor(() => old.isLeader(), 'the old candidate to lead on ZooKeeper', 20_000);

    await waitFor(() => !toOnly.isLeader(), 'the to-only candidate to step down', 20_000, 5);
    expect(performance.now() - oldStartedAt).toBeLessThanOrEqual(DETECT_BOUND_MS);
    // It stepped down on a renewal, suspecting an old node; it reports the conflict once sure.
    const health = await waitFor(() => (toOnly.health().ok ? null : toOnly.health()), 'the refusal in health()', REPORT_BOUND_MS, 5);
    expect(performance.now() - oldStartedAt).toBeLessThanOrEqual(REPORT_BOUND_MS);
    expect(health.problem).toMatch(/migration conflict: zookeeper-2 leads on zookeeper/);

    // It stays a follower while the old node leads.
    await delay(2 * LEASE_MS);
    expect(toOnly.isLeader()).toBe(false);
    expect(old.isLeader()).toBe(true);

    // The old node goes: the to-only candidate leads again.
    await old.stop();
    await waitFor(() => toOnly.isLeader(), 'the to-only candidate to lead again', 20_000);
    expect(toOnly.health().ok).toBe(true);
    // The only overlap is the one it detected, once.
    const report = checkSplitBrain(fleet.history.events);
    expect(report.overlaps.length).toBeLessThanOrEqual(1);
  } finally {
    await fleet.close();
  }
});

test('to-only candidates started beside an old ZooKeeper leader never lead, report the conflict, and lead once it is gone', async () => {
  const fleet = new MixedFleet(zookeeperToMysql(zk));
  try {
    const old = await fleet.add('old');
    await waitFor(() => old.isLeader(), 'the old candidate to lead on ZooKeeper', 20_000);
    fleet.startSampling();
    const toOnly = [await fleet.add('to-only'), await fleet.add('to-only')];

    const health = await waitFor(
      () => (toOnly.every((e) => !e.health().ok) ? toOnly[0]!.health() : null),
      'both to-only candidates to report the conflict',
      6 * LEASE_MS,
      10,
    );
    expect(health.problem).toMatch(/migration conflict: zookeeper-1 leads on zookeeper/);
    await delay(2 * LEASE_MS);
    expect(old.isLeader()).toBe(true);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(fleet.history.events.filter((e) => e.kind === 'elected' && e.candidateId.startsWith('to-only'))).toEqual([]);

    await old.stop();
    await waitFor(() => toOnly.some((e) => e.isLeader()), 'a to-only candidate to lead once the old one is gone', 20_000);
    // The other one clears the conflict at its next campaign or two (a look at ZooKeeper first).
    await waitFor(() => toOnly.every((e) => e.health().ok), 'both to-only candidates to report no conflict', 4 * LEASE_MS);
    const report = checkSplitBrain(fleet.history.events);
    expect(report.overlaps).toEqual([]);
    expect(fleet.doubleLeaderSamples).toEqual([]);
  } finally {
    await fleet.close();
  }
});

test('a to-only candidate whose ZooKeeper has not answered yet (its link held for half a lease) does not lead beside the old leader meanwhile', async () => {
  const leaseMs = 2_000;
  // Longer than a new term waits for its look at `from` (a quarter lease), shorter than a look is
  // awaited before `from` counts as gone (a lease) and than ZooKeeper's request timeout.
  const heldMs = leaseMs / 2;
  const proxy = await startTcpProxy({ targetPort: zk.port });
  // The to-only candidate's ZooKeeper session is up before its link is held: its look waits for
  // an answer on an open session, as on a loaded server.
  const slowFrom = zookeeperBackend({ connect: proxy.address });
  let toOnlyFrom = false;
  const fleet = new MixedFleet(
    { oldKind: 'zookeeper', from: () => (toOnlyFrom ? slowFrom : zookeeperBackend(zk)), to: () => new MysqlBackend({ uri: MYSQL_URI }) },
    undefined,
    leaseMs,
  );
  try {
    const old = await fleet.add('old');
    await waitFor(() => old.isLeader(), 'the old candidate to lead on ZooKeeper', 20_000);
    await slowFrom.getLeader(fleet.election);
    fleet.startSampling();
    toOnlyFrom = true;
    proxy.blackhole();
    const toOnly = await fleet.add('to-only');
    await delay(heldMs);
    proxy.resume();
    await waitFor(() => (toOnly.health().ok ? null : toOnly.health()), 'the to-only candidate to report the conflict', SESSION_TIMEOUT_MS + 3 * leaseMs, 10);
    expect(old.isLeader()).toBe(true);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(fleet.history.events.filter((e) => e.kind === 'elected' && e.candidateId.startsWith('to-only'))).toEqual([]);
  } finally {
    await fleet.close();
    await proxy.close();
  }
});
