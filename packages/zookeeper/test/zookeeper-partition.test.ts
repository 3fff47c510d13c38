import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Elector, type ElectionBackend } from '@conclave/core';
import { delay, waitFor } from '../../../test-harness/src/wait-for';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '@conclave/zookeeper/testing';
import { BackendPool, SESSION_TIMEOUT_MS } from './zookeeper-fixtures';

// A three-server ensemble whose peer links go through proxies, so that one member can be cut off
// from the two others while its clients still reach it (and read its stale copy of the tree).
let ensemble: ZookeeperEnsemble | undefined;
/** The member the test isolates (a follower), and the two others. */
let isolated = 0;
const onIsolated = new BackendPool(() => ensemble!.servers[isolated]!.connect);
const onOthers = new BackendPool(() =>
  ensemble!.servers
    .filter((_, i) => i !== isolated)
    .map((s) => s.connect)
    .join(','),
);
const electors: Elector[] = [];
const run = randomBytes(3).toString('hex');
const LEASE = 1500;

beforeAll(async () => {
  ensemble = await startZookeeperEnsemble({ peerProxies: true });
}, 180_000);

afterEach(async () => {
  ensemble?.heal();
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await onIsolated.closeAll();
  await onOthers.closeAll();
});

afterAll(async () => {
  await ensemble?.close();
});

function elector(backend: ElectionBackend, election: string, candidateId: string): Elector {
  const e = new Elector({ backend, election, candidateId, leaseMs: LEASE });
  electors.push(e);
  return e;
}

interface Watchdog {
  /** Instants (performance.now()) at which more than one Elector said isLeader(), with who. */
  overlaps: Array<{ atMs: number; leaders: string[] }>;
  /** Every election, in the order seen. */
  elected: Array<{ atMs: number; candidateId: string; token: number }>;
  stop(): void;
}

/** Polls every Elector's isLeader() every millisecond and records every election. */
function watchdog(list: Elector[]): Watchdog {
  const w: Watchdog = { overlaps: [], elected: [], stop: () => {} };
  const subscriptions = list.map((e) =>
    e.elected$.subscribe((ev) => w.elected.push({ atMs: performance.now(), candidateId: e.candidateId, token: ev.token })),
  );
  const timer = setInterval(() => {
    const leaders = list.filter((e) => e.isLeader()).map((e) => e.candidateId);
    if (leaders.length > 1) w.overlaps.push({ atMs: performance.now(), leaders });
  }, 1);
  w.stop = () => {
    clearInterval(timer);
    subscriptions.forEach((s) => s.unsubscribe());
  };
  return w;
}

describe('ZooKeeper: a member cut off from its peers', () => {
  test('a candidate whose session the quorum expired never leads on its isolated server’s stale view', async () => {
    const servers = ensemble!.servers;
    const modes = await Promise.all(servers.map((s) => s.mode()));
    isolated = modes.indexOf('follower');
    expect(isolated).toBeGreaterThanOrEqual(0);
    const e = `zk-partition-${run}-stale`;

    // Queue: b (leads), a (on the member to be isolated, and only there), c.
    const b = elector(onOthers.direct(), e, 'b');
    await b.start();
    const { backend: aBackend, proxy: aLink } = await onIsolated.proxied();
    const a = elector(aBackend, e, 'a');
    await a.start();
    const c = elector(onOthers.direct(), e, 'c');
    await c.start();
    await waitFor(() => b.isLeader() && a.state.leaderId === 'b' && c.state.leaderId === 'b', 'a and c to follow b');
    const firstToken = b.token!;
    let cElectedAt = Infinity;
    const dog = watchdog([a, b, c]);
    try {
      // a stands still from here (a long pause as the servers see it): nothing it sends or is sent
      // moves, its heartbeats included. The call just before makes its last contact now.
      await aBackend.getLeader(e);
      aLink.blackhole();
      // b leaves. Every member applies the delete, the one a is on included; the notification
      // that would wake a waits on a's link.
      await b.stop();
      const spy = onIsolated.direct();
      await waitFor(async () => !(await spy.candidates!.list(e)).includes('b'), 'a’s server to see b gone');
      await spy.close();
      // a's server loses its peers: it keeps serving reads from this state for syncLimit ticks,
      // while the two others expire a's session (nobody relays a's heartbeats any more) and
      // elect c.
      ensemble!.isolate(isolated);
      await waitFor(() => c.isLeader(), 'c to lead once the quorum has expired a’s session', SESSION_TIMEOUT_MS * 5);
      cElectedAt = performance.now();
      // a wakes up with its client link intact: it gets the notification and campaigns against
      // a server whose copy still shows its own node first.
      aLink.resume();
      await delay(4000);
      expect(a.isLeader()).toBe(false);
      ensemble!.heal();
      // a reconnects to a member in the quorum, learns that its session expired, and joins again
      // behind c.
      const admin = onOthers.direct();
      await waitFor(async () => (await admin.candidates!.list(e).catch(() => [])).join(',') === 'c,a', 'a to rejoin behind c', 30_000);
      await delay(LEASE);
      expect(c.isLeader()).toBe(true);
    } finally {
      dog.stop();
    }
    const o = dog.overlaps;
    const overlapMs = o.length > 0 ? Math.round(o[o.length - 1]!.atMs - o[0]!.atMs) : 0;
    expect({ overlapMs, first: o.slice(0, 3) }).toEqual({ overlapMs: 0, first: [] });
    expect(dog.elected.filter((ev) => ev.candidateId === 'a' && ev.atMs > cElectedAt)).toEqual([]);
    const tokens = [firstToken, ...dog.elected.map((ev) => ev.token)];
    expect(tokens.every((t, i) => i === 0 || t > tokens[i - 1]!)).toBe(true);
  }, 120_000);
});
