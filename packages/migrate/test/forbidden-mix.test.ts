import { performance } from 'node:perf_hooks';
import { checkSplitBrain, delay, waitFor, type ZookeeperServer } from '@conclave/test-harness';
import { LEASE_MS, MixedFleet, startTestZookeeper } from './migration-fixtures';

// The mix the rollout must never run: old ZooKeeper-only nodes beside to-only nodes (they share
// no lease). It cannot be prevented, but a to-only candidate detects it: while it leads on MySQL
// it looks at ZooKeeper's leader, and the same term there for two leases is an old node (a dual
// one gives ZooKeeper back within half a lease when it cannot take MySQL). It then steps down,
// refuses to lead with MIGRATION_CONFLICT, and reports it in health().
//
// Bound: the old node's term is first seen within half a lease of a to-only renewal, confirmed
// two leases later, and the next renewal (a third of a lease) gives MySQL back: 4 leases covers
// that with room for the round trips.
const DETECT_BOUND_MS = 4 * LEASE_MS;

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

test(`a to-only leader that finds an old ZooKeeper node leading steps down within ${DETECT_BOUND_MS} ms and refuses to lead while it runs`, async () => {
  const fleet = new MixedFleet(zk);
  try {
    const toOnly = await fleet.add('to-only');
    await waitFor(() => toOnly.isLeader(), 'the to-only candidate to lead', 20_000);
    const oldStartedAt = performance.now();
    const old = await fleet.add('zookeeper');
    await waitFor(() => old.isLeader(), 'the old candidate to lead on ZooKeeper', 20_000);

    await waitFor(() => !toOnly.isLeader(), 'the to-only candidate to step down', 20_000, 5);
    expect(performance.now() - oldStartedAt).toBeLessThanOrEqual(DETECT_BOUND_MS);
    // It stepped down on a renewal; the campaign that follows at once is the one refused.
    const health = await waitFor(() => (toOnly.health().ok ? null : toOnly.health()), 'the refusal in health()', 1000, 5);
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
