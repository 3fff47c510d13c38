import { expect, test } from '@jest/globals';
import { Etcd3 } from 'etcd3';
import { EtcdBackend } from '@conclave/etcd';
import type { ElectionKeys } from '../src/etcd-store';
import type { PredecessorWatches } from '../src/etcd-watches';
import { closedAfterAll, eventually, kvRequests as kvRequestsOf, metricSum, privateEtcd } from './etcd-test-env';

// A follower whose predecessor went without handing over (a crash: its lease went) starts its
// term in the transaction that reads the election, when its key heads the queue with no fence and
// the token floor is as its last campaign saw it. A candidate that does not head the queue, or
// whose floor moved, must not start a term in that transaction.

const etcd = privateEtcd();
const opened = closedAfterAll();

function backend(): EtcdBackend {
  const b = new EtcdBackend({ hosts: etcd.hosts, prefix: 'takeover/' });
  opened.push(b);
  return b;
}

/** KV requests (Txn and Range) the member received. */
const kvRequests = () => kvRequestsOf(etcd.cluster.members[0]!.port);
/** Raft proposals the member committed: every transaction that may write is one, even when its compare fails. */
const proposals = () => metricSum(etcd.cluster.members[0]!.port, 'etcd_server_proposals_committed_total');

/** Whether the process's watch was up at the candidate's last campaign read (backend internals, read for the test only). */
function watchCovers(b: EtcdBackend, election: string, id: string): boolean {
  const internals = b as unknown as {
    keys: ElectionKeys;
    candidacies: Map<string, { floorSeen?: { revision: number } }>;
    watches: PredecessorWatches;
  };
  const key = internals.keys.candidate(election, id);
  const read = internals.candidacies.get(key)?.floorSeen?.revision;
  return read !== undefined && internals.watches.changedAfter(key, read) !== null;
}

interface Queued {
  leader: EtcdBackend;
  leaderToken: number;
  follower: EtcdBackend;
  /** Runs `action` and waits until it woke the follower. */
  wokenBy(action: () => Promise<unknown>): Promise<void>;
  unwatch: () => void;
}

/**
 * `leader` leads `election` and `follower` ('f') is queued behind it, watching, with a campaign
 * read made once its watch was up (as an Elector's campaigns after its first).
 */
async function queued(election: string, follower: EtcdBackend): Promise<Queued> {
  const leader = backend();
  const won = await leader.campaign({ election, candidateId: 'l', leaseMs: 3000 });
  expect(won.role).toBe('leader');
  let woken = 0;
  const unwatch = follower.changes!.watch(election, 'f', () => woken++);
  expect((await follower.campaign({ election, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
  // Campaign until a read falls after the watch's start, so that the watch can tell whether the
  // key changed since (the server confirms a watch on its own time).
  await eventually(async () => {
    await follower.campaign({ election, candidateId: 'f', leaseMs: 3000 });
    return watchCovers(follower, election, 'f');
  }, 'a read the watch covers', 5000);
  const wokenBy = async (action: () => Promise<unknown>) => {
    const before = woken;
    await action();
    await eventually(() => woken > before, 'the follower is woken', 5000);
  };
  return { leader, leaderToken: (won as { token: number }).token, follower, wokenBy, unwatch };
}

test('a follower woken by its predecessor\'s crash starts its term in one transaction, with a higher token', async () => {
  const election = `takeover-one-${process.pid}`;
  const q = await queued(election, backend());
  try {
    // The leader's process goes and its lease with it: its key is deleted, no hand-over.
    await q.wokenBy(() => q.leader.close());
    const before = await kvRequests();
    const won = await q.follower.campaign({ election, candidateId: 'f', leaseMs: 3000 });
    const sent = (await kvRequests()) - before;
    expect(won.role).toBe('leader');
    expect((won as { token: number }).token).toBeGreaterThan(q.leaderToken);
    expect(sent).toBe(1);
    expect((await q.follower.getLeader(election))?.token).toBe((won as { token: number }).token);
  } finally {
    q.unwatch();
  }
});

test('a follower that does not head the queue starts no term in that transaction: it stays a follower, the leader keeps its term', async () => {
  const election = `takeover-behind-${process.pid}`;
  const q = await queued(election, backend());
  try {
    // Its next campaign sends the transaction that would start its term if its key headed the queue.
    const again = await q.follower.campaign({ election, candidateId: 'f', leaseMs: 3000 });
    expect(again).toMatchObject({ role: 'follower', leaderId: 'l', token: q.leaderToken });
    expect(await q.follower.getLeader(election)).toMatchObject({ candidateId: 'l', token: q.leaderToken });
    // No token offset written into its key: a term started there would count from it later.
    const raw = new Etcd3({ hosts: etcd.hosts });
    opened.push(raw);
    const own = JSON.parse((await raw.get(`takeover/${election}/c/f`).string()) ?? 'null') as { id: string; o?: number } | null;
    expect(own).toEqual({ id: 'f' });
    expect(await q.leader.renew({ election, candidateId: 'l', token: q.leaderToken, leaseMs: 3000 })).toMatchObject({ held: true });
  } finally {
    q.unwatch();
  }
});

test('a follower whose token floor was raised after its read starts its term above the floor', async () => {
  const election = `takeover-floor-${process.pid}`;
  const admin = backend();
  const q = await queued(election, backend());
  try {
    const floor = q.leaderToken + 1_000_000;
    await admin.tokenFloor!.raise(election, floor);
    await q.wokenBy(() => q.leader.close());
    const won = await q.follower.campaign({ election, candidateId: 'f', leaseMs: 3000 });
    expect(won.role).toBe('leader');
    expect((won as { token: number }).token).toBeGreaterThan(floor);
  } finally {
    q.unwatch();
  }
});

test('a follower woken by a hand-over, which wrote its token offset, only reads: its campaign makes no Raft proposal', async () => {
  const election = `takeover-handover-${process.pid}`;
  const q = await queued(election, backend());
  try {
    await q.wokenBy(() => q.leader.release({ election, candidateId: 'l', token: q.leaderToken }));
    const handed = await q.follower.getLeader(election);
    const before = await proposals();
    const won = await q.follower.campaign({ election, candidateId: 'f', leaseMs: 3000 });
    expect(won).toMatchObject({ role: 'leader', token: handed!.token });
    expect((await proposals()) - before).toBe(0);
  } finally {
    q.unwatch();
  }
});

test('a candidate whose listing of the queue shows its own key at the head is woken, and its campaign leads', async () => {
  const election = `takeover-listed-head-${process.pid}`;
  const first = backend();
  const second = backend();
  const candidate = backend();
  expect((await first.campaign({ election, candidateId: 'a', leaseMs: 3000 })).role).toBe('leader');
  expect((await second.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
  // Third: its campaign's read (the queue's first two keys) does not show its predecessor, so its
  // subscription lists the queue to find it.
  expect((await candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
  // Both go before that listing: it finds the candidate's key at the head, with no term started.
  await first.close();
  await second.close();
  let woken = 0;
  const unwatch = candidate.changes!.watch(election, 'f', () => woken++);
  try {
    await eventually(() => woken > 0, 'the candidate is woken', 5000);
    expect(await candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).toMatchObject({ role: 'leader' });
  } finally {
    unwatch();
  }
});

interface QueuedThird {
  first: EtcdBackend;
  second: EtcdBackend;
  candidate: EtcdBackend;
  /** The leader's (a's) token. */
  leaderToken: number;
  /** How often the candidate ('f') was woken so far. */
  woken(): number;
  /** The revision of the last change the candidate's process watch saw of b's key (backend internals, read for the test only). */
  predecessorSeen(): number | undefined;
  unwatch: () => void;
}

/**
 * `first` leads `election` ('a'), `second` follows ('b'), and `candidate` ('f') queued third,
 * watching: its campaign's read (the queue's first two keys) does not show its predecessor, so
 * its subscription lists the queue and waits behind b, a follower.
 */
async function queuedThird(election: string): Promise<QueuedThird> {
  const first = backend();
  const second = backend();
  const candidate = backend();
  const a = await first.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  expect(a.role).toBe('leader');
  expect((await second.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
  let woken = 0;
  const unwatch = candidate.changes!.watch(election, 'f', () => woken++);
  expect((await candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
  await eventually(() => candidate.changes!.isWatching!(election, 'f'), 'the candidate waits for its predecessor', 5000);
  const internals = candidate as unknown as { keys: ElectionKeys; watches: { shared: { lastChange: Map<string, number> } | null } };
  const predecessor = internals.keys.candidate(election, 'b');
  return {
    first,
    second,
    candidate,
    leaderToken: (a as { token: number }).token,
    woken: () => woken,
    predecessorSeen: () => internals.watches.shared?.lastChange.get(predecessor),
    unwatch,
  };
}

test('a candidate queued behind a follower is not woken when that follower goes: it waits for the head next, and is woken when the head goes', async () => {
  const election = `takeover-behind-follower-${process.pid}`;
  const q = await queuedThird(election);
  try {
    const wokenBefore = q.woken();
    const seenBefore = q.predecessorSeen();
    await q.second.close();
    await eventually(() => q.predecessorSeen() !== seenBefore, 'the watch sees the predecessor go', 5000);
    await eventually(() => q.candidate.changes!.isWatching!(election, 'f'), 'the candidate waits again', 5000);
    expect(q.woken()).toBe(wokenBefore);
    // Its wait is now for the head.
    await q.first.close();
    await eventually(() => q.woken() > wokenBefore, 'the candidate is woken by the head going', 5000);
    expect(await q.candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).toMatchObject({ role: 'leader' });
  } finally {
    q.unwatch();
  }
});

test('a candidate queued behind a follower whose term then started is woken by that term\'s end without listing the queue', async () => {
  const election = `takeover-behind-successor-${process.pid}`;
  const q = await queuedThird(election);
  try {
    const seenBefore = q.predecessorSeen();
    // The leader hands over: its successor's key is written as its term starts.
    await q.first.release({ election, candidateId: 'a', token: q.leaderToken });
    await eventually(() => q.predecessorSeen() !== seenBefore, 'the watch sees the term start', 5000);
    const b = await q.second.campaign({ election, candidateId: 'b', leaseMs: 3000 });
    expect(b.role).toBe('leader');
    const wokenBefore = q.woken();
    const before = await kvRequests();
    await q.second.release({ election, candidateId: 'b', token: (b as { token: number }).token });
    await eventually(() => q.woken() > wokenBefore, 'the candidate is woken by the term\'s end', 5000);
    // The release's one transaction, and no listing before the wake-up.
    expect((await kvRequests()) - before).toBe(1);
    expect(await q.candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).toMatchObject({ role: 'leader' });
  } finally {
    q.unwatch();
  }
});

test('a candidate queued behind a follower whose own key was deleted behind its back is woken when that follower goes', async () => {
  const election = `takeover-behind-gone-${process.pid}`;
  const q = await queuedThird(election);
  try {
    const raw = new Etcd3({ hosts: etcd.hosts });
    opened.push(raw);
    await raw.delete().key(`takeover/${election}/c/f`);
    const wokenBefore = q.woken();
    await q.second.close();
    // Out of the queue, it must campaign to join it again, not wait for the head.
    await eventually(() => q.woken() > wokenBefore, 'the candidate is woken', 5000);
    expect((await q.candidate.campaign({ election, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
    expect(await q.candidate.candidates!.list(election)).toEqual(['a', 'f']);
  } finally {
    q.unwatch();
  }
});
