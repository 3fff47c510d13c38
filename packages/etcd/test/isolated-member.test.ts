import { expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { EtcdBackend } from '@conclave/etcd';
import { startTcpProxy, type TcpProxy } from '@conclave/test-harness/tools';
import type { PredecessorWatches } from '../src/etcd-watches';
import { closedAfterAll, eventually, metricSum, privateEtcd, raftLeaderOf, sleep } from './etcd-test-env';

// A member cut off from its peers applies none of the changes the others make, so a watch standing
// on it stays open and silent: a follower whose watch stands there would not see its predecessor
// go until the member rejoins, and the election would have no leader all that time. The watch
// must end instead (etcd ends a stream that requires a leader once its member has none), so that
// the follower looks again through another member. Likewise a leader's renewal sent to that member
// must be refused at once and answered by another, not held there until its deadline.

const etcd = privateEtcd({ members: 3, peerLinks: true });
const opened = closedAfterAll();

/** Long enough that no lease lapses during the test: only the watch can wake the follower. */
const LEASE_MS = 30_000;
/** How long the member stays cut off at most: far past the few election timeouts (600 ms each) etcd takes to end the watch. */
const CUT_OFF_MS = 15_000;

/** Whether the backend's shared watch is confirmed by its member (backend internals, read for the test only). */
function watchConfirmed(b: EtcdBackend): boolean {
  const watches = (b as unknown as { watches: PredecessorWatches }).watches;
  const shared = (watches as unknown as { shared: { createdAt: number | null } | null }).shared;
  return shared?.createdAt != null;
}

test("a follower whose watch stands on a member cut off from its peers is woken, and leads, when its predecessor goes while the member is still cut off", async () => {
  const cluster = etcd.cluster;
  const raftLeader = await raftLeaderOf(cluster);
  const cutOff = cluster.members.findIndex((_, i) => i !== raftLeader);
  const election = `isolated-${process.pid}`;
  const prefix = 'isolated/';

  const leader = new EtcdBackend({ hosts: [etcd.hosts[raftLeader]!], prefix });
  opened.push(leader);
  const token = await eventually(async () => {
    const res = await leader.campaign({ election, candidateId: 'l', leaseMs: LEASE_MS }).catch(() => null);
    return res?.role === 'leader' ? res.token : null;
  }, 'the first candidate to lead', 20_000);

  // The follower reaches the two other members through proxies, so that its watch can be made to
  // stand on the member to be cut off: those proxies refuse connections while the watch is set up.
  const proxies = new Map<number, TcpProxy>();
  for (const i of cluster.members.keys()) {
    if (i === cutOff) continue;
    const proxy = await startTcpProxy({ targetPort: cluster.members[i]!.port });
    opened.push(proxy);
    proxies.set(i, proxy);
  }
  const hosts = etcd.hosts.map((host, i) => proxies.get(i)?.address ?? host);
  const follower = new EtcdBackend({ hosts, prefix, requestTimeoutMs: 2_000 });
  opened.push(follower);
  let woken = 0;
  proxies.forEach((p) => p.cut());
  const unwatch = follower.changes!.watch(election, 'f', () => woken++);
  try {
    await eventually(async () => {
      const res = await follower.campaign({ election, candidateId: 'f', leaseMs: LEASE_MS }).catch(() => null);
      return res?.role === 'follower' && watchConfirmed(follower);
    }, 'the follower queued, its watch on the member to be cut off', 20_000);
    proxies.forEach((p) => p.resume());

    cluster.isolate(cutOff, 'silent');
    const cutAt = performance.now();
    let wokenAfterMs: number | null = null;
    let ledAfterMs: number | null = null;
    try {
      const before = woken;
      await leader.release({ election, candidateId: 'l', token });
      while (performance.now() - cutAt < CUT_OFF_MS) {
        if (wokenAfterMs === null && woken > before) wokenAfterMs = performance.now() - cutAt;
        if (wokenAfterMs !== null) {
          const res = await follower.campaign({ election, candidateId: 'f', leaseMs: LEASE_MS }).catch(() => null);
          if (res?.role === 'leader') {
            ledAfterMs = performance.now() - cutAt;
            break;
          }
        }
        await sleep(50);
      }
    } finally {
      cluster.heal();
    }
    const after = (ms: number | null) => (ms === null ? 'never' : `after ${Math.round(ms)} ms`);
    const detail = `member ${cutOff} cut off for ${CUT_OFF_MS} ms at most: follower woken ${after(wokenAfterMs)}, leading ${after(ledAfterMs)}`;
    expect({ detail, wokenWhileCutOff: wokenAfterMs !== null, ledWhileCutOff: ledAfterMs !== null }).toEqual({ detail, wokenWhileCutOff: true, ledWhileCutOff: true });
  } finally {
    unwatch();
  }
}, 90_000);

test('a leader whose calls go to a member cut off from its peers, or to another, keeps renewing: that member refuses them at once and the other answers', async () => {
  const cluster = etcd.cluster;
  const raftLeader = await raftLeaderOf(cluster);
  const cutOff = cluster.members.findIndex((_, i) => i !== raftLeader);
  const election = `isolated-renew-${process.pid}`;
  const leaseMs = 3_000;
  // Each call goes to one of the two members at random.
  const backend = new EtcdBackend({ hosts: [etcd.hosts[cutOff]!, etcd.hosts[raftLeader]!], prefix: 'isolated/' });
  opened.push(backend);
  await eventually(async () => (await backend.campaign({ election, candidateId: 'a', leaseMs }).catch(() => null))?.role === 'leader', 'to lead', 20_000);

  cluster.isolate(cutOff, 'silent');
  const renewals: string[] = [];
  try {
    await eventually(async () => (await metricSum(cluster.members[cutOff]!.port, 'etcd_server_has_leader')) === 0, 'the cut-off member to know it has no leader', 10_000);
    // Its term may have lapsed meanwhile: lead again, until a renewal holds. A renewal's keep-alive
    // is then answered on a stream through the other member (the cut-off one answers none): the
    // stream it had through the cut-off member, if any, is gone, and the stream stays where it is.
    const token = await eventually(async () => {
      const res = await backend.campaign({ election, candidateId: 'a', leaseMs }).catch(() => null);
      if (res?.role !== 'leader') return null;
      const renewed = await backend.renew({ election, candidateId: 'a', token: res.token, leaseMs, deadlineMs: performance.now() + 1_000 }).catch(() => null);
      return renewed?.held === true ? res.token : null;
    }, 'to lead and renew with the member cut off', 15_000);
    // Ten renewals, each given a second, spaced so that the cut-off member is tried again (a member
    // that refused a call is shunned for a second): each one's check goes to either member.
    for (let i = 0; i < 10; i++) {
      const res = await backend
        .renew({ election, candidateId: 'a', token, leaseMs, deadlineMs: performance.now() + 1_000 })
        .then((r) => (r.held ? 'held' : 'lost'), (err: { code?: string; message?: string }) => `${err.code ?? 'error'}: ${err.message}`);
      renewals.push(res);
      await sleep(400);
    }
  } finally {
    cluster.heal();
  }
  expect(renewals).toEqual(renewals.map(() => 'held'));
}, 90_000);
