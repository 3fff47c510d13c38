import { expect, test } from '@jest/globals';
import { Etcd3 } from 'etcd3';
import type { WatchClient } from 'etcd3/lib/rpc';
import { EtcdBackend } from '@conclave/etcd';
import { startTcpProxy } from '@conclave/test-harness/tools';
import { WatchStream } from '../src/etcd-watch-stream';
import { PrefixWatch, type Wait } from '../src/etcd-prefix-watch';
import { closedAfterAll, eventually, kvRequests, metricSum, privateEtcd, sleep } from './etcd-test-env';

// A process that campaigns in thousands of elections at once (all its Electors started
// together, or the successors of a process that led them all) sends their transactions in
// batches, and sets up its candidates' watches without waiting for each other. Neither may
// change what one election sees.

const etcd = privateEtcd();
const opened = closedAfterAll();

function backend(): EtcdBackend {
  const b = new EtcdBackend({ hosts: etcd.hosts, prefix: 'batching/' });
  opened.push(b);
  return b;
}

function rawClient(): Etcd3 {
  const client = new Etcd3({ hosts: etcd.hosts });
  opened.push(client);
  return client;
}

/** `raw`'s watch client, each watch creation of which goes through `create` (given what sends it). */
function watchCreationsThrough(raw: Etcd3, create: (send: () => void) => void): WatchClient {
  return new Proxy(raw.watchClient, {
    get(target, prop, receiver) {
      if (prop !== 'watch') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<WatchClient['watch']>) => {
        const stream = await target.watch(...args);
        const write = stream.write.bind(stream);
        stream.write = ((req: { create_request?: unknown }) => {
          if (req.create_request) create(() => write(req as never));
          else write(req as never);
          return true;
        }) as typeof stream.write;
        return stream;
      };
    },
  });
}

const requests = () => kvRequests(etcd.cluster.members[0]!.port);
/** KV transactions the member refused as invalid (too many operations, a key written twice). */
const refused = () => metricSum(etcd.cluster.members[0]!.port, 'grpc_server_handled_total', /grpc_code="InvalidArgument",grpc_method="Txn"/);
/** Messages received on watch streams: each creates or cancels a watch. */
const watchRequests = () => metricSum(etcd.cluster.members[0]!.port, 'grpc_server_msg_received_total', /grpc_method="Watch"/);

test('the campaigns of 126 elections started in one turn go out in batches within etcd\'s --max-txn-ops: a few transactions, none refused', async () => {
  const b = backend();
  const name = (i: number) => `batch-many-${process.pid}-${i}`;
  const before = await requests();
  const refusedBefore = await refused();
  const results = await Promise.all(Array.from({ length: 126 }, (_, i) => b.campaign({ election: name(i), candidateId: 'a', leaseMs: 3000 })));
  const sent = (await requests()) - before;
  expect(results.every((r) => r.role === 'leader')).toBe(true);
  // Two batches create the keys and read each election (a nested transaction gets what its
  // parent leaves of the 128 operations), two more start the terms; alone, each campaign is two
  // transactions.
  expect({ sent: sent <= 4, refused: (await refused()) - refusedBefore }).toEqual({ sent: true, refused: 0 });
  // Each election's own: every key is there, with its election's token.
  for (let i = 0; i < 126; i += 25) expect((await b.getLeader(name(i)))?.token).toBe((results[i] as { token: number }).token);
});

test('the releases of 100 terms made in one turn go out in batches: a few transactions, each term ended and handed to its successor', async () => {
  const [a, b] = [backend(), backend()];
  const name = (i: number) => `batch-release-${process.pid}-${i}`;
  const n = 100;
  const led = await Promise.all(Array.from({ length: n }, (_, i) => a.campaign({ election: name(i), candidateId: 'a', leaseMs: 3000 })));
  const followed = await Promise.all(Array.from({ length: n }, (_, i) => b.campaign({ election: name(i), candidateId: 'b', leaseMs: 3000 })));
  expect([led.every((r) => r.role === 'leader'), followed.every((r) => r.role === 'follower')]).toEqual([true, true]);
  // One more term keeps the lease of `a` held, so that closing `a` revokes it (see the end).
  await a.campaign({ election: name(n), candidateId: 'a', leaseMs: 3000 });
  const before = await requests();
  const refusedBefore = await refused();
  // As a process whose renewals all came too late releases its terms: in one turn.
  await Promise.all(led.map((r, i) => a.release({ election: name(i), candidateId: 'a', token: (r as { token: number }).token })));
  const sent = (await requests()) - before;
  // Alone, each release is a transaction of its own.
  expect({ sent: sent <= 4, refused: (await refused()) - refusedBefore }).toEqual({ sent: true, refused: 0 });
  // Each election's own: its leader key went, and its successor's term started.
  for (let i = 0; i < n; i += 20) expect((await b.getLeader(name(i)))?.candidateId).toBe('b');
  // Their leases are revoked now: a lease left to lapse is revoked by etcd seconds later, a Raft
  // proposal in a later test's window.
  await Promise.all([a.close(), b.close()]);
});

test("the candidates of one election in one process share one watch on it: their hand-overs send the server no watch request", async () => {
  const [a, b] = [backend(), backend()];
  const election = `batch-shared-${process.pid}`;
  const ids = ['x', 'y', 'z'];
  let token = (await a.campaign({ election, candidateId: 'a', leaseMs: 3000 })) as { token: number };
  const woken = new Map(ids.map((id) => [id, 0]));
  const unwatch = ids.map((id) => b.changes!.watch(election, id, () => woken.set(id, woken.get(id)! + 1)));
  try {
    for (const id of ids) expect((await b.campaign({ election, candidateId: id, leaseMs: 3000 })).role).toBe('follower');
    await eventually(() => ids.every((id) => b.changes!.isWatching!(election, id)), 'every candidate waiting');
    const before = await watchRequests();
    // a hands over to x, x to y, y to z: each wakes its successor, which moves on to its next key.
    let holder = { backend: a, id: 'a' };
    for (const id of ids) {
      await holder.backend.release({ election, candidateId: holder.id, token: token.token });
      await eventually(() => woken.get(id)! > 0, `${id} woken`);
      const won = await b.campaign({ election, candidateId: id, leaseMs: 3000 });
      expect(won.role).toBe('leader');
      token = won as { token: number };
      holder = { backend: b, id };
    }
    expect((await watchRequests()) - before).toBe(0);
  } finally {
    unwatch.forEach((u) => u());
  }
});

test('the candidates of every election in one process share one watch: candidates of more elections send no watch request, and each is still woken by its own predecessor', async () => {
  const [a, b] = [backend(), backend()];
  const names = Array.from({ length: 5 }, (_, i) => `batch-prefix-${process.pid}-${i}`);
  const tokens = await Promise.all(names.map((election) => a.campaign({ election, candidateId: 'a', leaseMs: 3000 }) as Promise<{ token: number }>));
  const woken = new Map(names.map((n) => [n, 0]));
  const unwatch: Array<() => void> = [];
  try {
    unwatch.push(b.changes!.watch(names[0]!, 'f', () => woken.set(names[0]!, woken.get(names[0]!)! + 1)));
    expect((await b.campaign({ election: names[0]!, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
    await eventually(() => b.changes!.isWatching!(names[0]!, 'f'), 'the first candidate waiting');
    const before = await watchRequests();
    for (const election of names.slice(1)) {
      unwatch.push(b.changes!.watch(election, 'f', () => woken.set(election, woken.get(election)! + 1)));
      expect((await b.campaign({ election, candidateId: 'f', leaseMs: 3000 })).role).toBe('follower');
    }
    await eventually(() => names.every((n) => b.changes!.isWatching!(n, 'f')), 'every candidate waiting');
    expect((await watchRequests()) - before).toBe(0);
    // The release of one election wakes its follower there, and no other.
    await a.release({ election: names[2]!, candidateId: 'a', token: tokens[2]!.token });
    await eventually(() => woken.get(names[2]!)! > 0, 'the follower of the released election woken');
    expect(names.filter((n) => woken.get(n)! > 0)).toEqual([names[2]]);
  } finally {
    unwatch.forEach((u) => u());
  }
});

test('two candidates of one election campaigning in the same turn in one process never share a batch: their tokens differ, the later term greater', async () => {
  const b = backend();
  const election = `batch-same-${process.pid}`;
  const [x, y] = await Promise.all([
    b.campaign({ election, candidateId: 'x', leaseMs: 3000 }),
    b.campaign({ election, candidateId: 'y', leaseMs: 3000 }),
  ]);
  expect([x.role, y.role].sort()).toEqual(['follower', 'leader']);
  const [leaderId, otherId, first] = x.role === 'leader' ? (['x', 'y', x] as const) : (['y', 'x', y] as const);
  const firstToken = (first as { token: number }).token;
  await b.release({ election, candidateId: leaderId, token: firstToken });
  const next = await b.campaign({ election, candidateId: otherId, leaseMs: 3000 });
  expect(next.role).toBe('leader');
  // Keys created by one transaction share its revision, and a key's create revision is its token.
  expect((next as { token: number }).token).toBeGreaterThan(firstToken);
});

test("a batch etcd refuses for one election's lapsed lease still answers the other elections of the batch", async () => {
  const b = backend();
  const raw = rawClient();
  const tag = `batch-refused-${process.pid}`;
  // Two leases of the backend: a 10 s TTL (leaseMs 10500) and a 5 s TTL (leaseMs 5500).
  await b.campaign({ election: `${tag}-0`, candidateId: 'a', leaseMs: 10_500 });
  await b.campaign({ election: `${tag}-1`, candidateId: 'a', leaseMs: 5500 });
  const [held] = (await raw.getAll().prefix(`batching/${tag}-0/c/`).exec()).kvs;
  // The 10 s lease revoked behind the backend's back (its next keep-alive, seconds away, would tell it).
  await raw.leaseClient.leaseRevoke({ ID: held!.lease });
  const [onRevoked, onLive] = await Promise.allSettled([
    b.campaign({ election: `${tag}-2`, candidateId: 'a', leaseMs: 10_500 }),
    b.campaign({ election: `${tag}-3`, candidateId: 'a', leaseMs: 5500 }),
  ]);
  expect(onLive.status).toBe('fulfilled');
  expect((onLive as PromiseFulfilledResult<{ role: string }>).value.role).toBe('leader');
  if (onRevoked.status === 'rejected') expect(String(onRevoked.reason)).toMatch(/lease not found/i);
});

test('a follower right behind the head watches the head from its campaign read, without listing the queue', async () => {
  const [a, b] = [backend(), backend()];
  const election = `batch-seen-${process.pid}`;
  const leader = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  let woken = 0;
  const unwatch = b.changes!.watch(election, 'b', () => woken++);
  try {
    const before = await requests();
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
    await eventually(() => b.changes!.isWatching!(election, 'b'), 'b watching');
    expect((await requests()) - before).toBe(1);
    // The watch is on the head: its release wakes b.
    await a.release({ election, candidateId: 'a', token: (leader as { token: number }).token });
    await eventually(() => woken > 0, 'b woken');
  } finally {
    unwatch();
  }
});

test('watches are created without waiting for each other: a hundred are all written before the server confirms the first', async () => {
  const raw = rawClient();
  let written = 0;
  let writtenAtFirstConfirmation = -1;
  const watchClient = watchCreationsThrough(raw, (send) => {
    written++;
    send();
  });
  const watches = new WatchStream(watchClient);
  opened.push(watches);
  const confirmed = new Set<number>();
  const changed: number[] = [];
  const lost: number[] = [];
  const prefix = `batching/stream-${process.pid}/`;
  for (let i = 0; i < 100; i++) {
    watches.watch(`${prefix}${i}`, {
      created: () => {
        if (writtenAtFirstConfirmation < 0) writtenAtFirstConfirmation = written;
        confirmed.add(i);
      },
      changed: () => changed.push(i),
      lost: () => lost.push(i),
    });
  }
  await eventually(() => confirmed.size === 100, 'every watch confirmed');
  expect(writtenAtFirstConfirmation).toBe(100);
  // Each event reaches the watch of its key, and only it.
  await raw.put(`${prefix}42`).value('x');
  await raw.put(`${prefix}7`).value('x');
  await eventually(() => changed.length === 2, 'both events');
  expect(changed).toEqual([42, 7]);
  expect(lost).toEqual([]);
});

test('a broken watch stream loses every watch on it, each owner told once, and the next watch opens a new stream', async () => {
  const proxy = await startTcpProxy({ targetPort: etcd.cluster.members[0]!.port });
  opened.push(proxy);
  const raw = new Etcd3({ hosts: [proxy.address] });
  opened.push(raw);
  const watches = new WatchStream(raw.watchClient);
  opened.push(watches);
  const prefix = `batching/broken-${process.pid}/`;
  const confirmed: string[] = [];
  const lost: string[] = [];
  const watch = (key: string) =>
    watches.watch(`${prefix}${key}`, { created: () => confirmed.push(key), changed: () => undefined, lost: () => lost.push(key) });
  watch('a');
  watch('b');
  await eventually(() => confirmed.length === 2, 'both watches confirmed');
  proxy.cut();
  await eventually(() => lost.length === 2, 'both watches lost');
  expect(lost.sort()).toEqual(['a', 'b']);
  proxy.resume();
  watch('c');
  await eventually(() => confirmed.includes('c'), 'the new watch confirmed');
  expect(lost).toHaveLength(2);
});

test("a follower's predecessor that goes between the read that chose it and the start of the watch on it wakes the follower", async () => {
  const raw = rawClient();
  // b's watch creations are held until `open`: a's release lands in between.
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const watchClient = watchCreationsThrough(raw, (send) => void gate.then(send));
  const b = new EtcdBackend({ client: { kv: raw.kv, leaseClient: raw.leaseClient, watchClient, close: () => undefined }, prefix: 'batching/' });
  opened.push(b);
  const a = backend();
  const election = `batch-between-${process.pid}`;
  const leader = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  let woken = 0;
  const unwatch = b.changes!.watch(election, 'b', () => woken++);
  try {
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
    await a.release({ election, candidateId: 'a', token: (leader as { token: number }).token });
    open();
    await eventually(() => woken > 0, 'b woken', 5_000);
  } finally {
    unwatch();
  }
});

test('campaigns made while a batch is in flight wait for it, briefly, and then go together', async () => {
  const b = await etcd.proxied();
  const name = (i: number) => `batch-held-${process.pid}-${i}`;
  // The lease granted first: every campaign below starts with a transaction.
  await b.campaign({ election: name(100), candidateId: 'a', leaseMs: 3000 });
  const before = await requests();
  etcd.proxyOf(b).blackhole();
  const campaigns: Array<Promise<unknown>> = [b.campaign({ election: name(0), candidateId: 'a', leaseMs: 3000 })];
  // Twenty more, each in a turn of its own, while the first one's batch is in flight.
  for (let i = 1; i <= 20; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    campaigns.push(b.campaign({ election: name(i), candidateId: 'a', leaseMs: 3000 }));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  etcd.proxyOf(b).resume();
  const results = (await Promise.all(campaigns)) as Array<{ role: string }>;
  expect(results.every((r) => r.role === 'leader')).toBe(true);
  // Alone, 21 campaigns are 42 transactions; in one turn each, 42 batches.
  const sent = (await requests()) - before;
  expect(sent).toBeLessThanOrEqual(8);
  await b.close();
});

test('a wait whose read is older than the changes the watch forgot is checked by reading its key again, not from memory', async () => {
  const raw = rawClient();
  const watches = new WatchStream(raw.watchClient);
  opened.push(watches);
  const prefix = `batching/prune-${process.pid}/`;
  const lookedBetween: Wait[] = [];
  const pruneEveryMs = 50;
  const watch = new PrefixWatch(watches, prefix, (wait) => lookedBetween.push(wait), () => undefined, pruneEveryMs);
  opened.push({ close: () => watch.cancel() });
  // Confirmed: a wait read at a revision after the watch's start.
  const probe = await raw.put(`${prefix}probe`).value('0').exec();
  await eventually(() => watch.changedAfter(`${prefix}probe`, Number(probe.header.revision)) !== null, 'the watch confirmed');
  // The target is read, then deleted; then other changes, more than two prune periods apart, make
  // the watch forget that deletion.
  const target = `${prefix}target`;
  const readAt = Number((await raw.put(target).value('x').exec()).header.revision);
  await raw.delete().key(target).exec();
  for (let i = 0; i < 3; i++) {
    await sleep(pruneEveryMs + 10);
    await raw.put(`${prefix}other`).value(String(i)).exec();
  }
  await eventually(() => watch.changedAfter(target, readAt) === null, 'the deletion forgotten');
  let woken = 0;
  const wait: Wait = { election: 'e', seen: { target, head: false, existed: true, revision: String(readAt) }, wake: () => woken++ };
  watch.add(wait);
  // Not woken from memory (the change was forgotten): the key is read again instead.
  expect(lookedBetween).toEqual([wait]);
  expect(woken).toBe(0);
});

test('the renewals of one turn are one read-only transaction (no Raft proposal); when a key of the batch is gone, only its renewal fails', async () => {
  const b = backend();
  const raw = rawClient();
  const names = Array.from({ length: 20 }, (_, i) => `batch-renew-${process.pid}-${i}`);
  const tokens = (await Promise.all(names.map((election) => b.campaign({ election, candidateId: 'a', leaseMs: 3000 })))).map((r) => (r as { token: number }).token);
  const renewAll = () => Promise.all(names.map((election, i) => b.renew({ election, candidateId: 'a', token: tokens[i]!, leaseMs: 3000 })));
  // Proposals not counting lease revocations: an earlier test's lease, no longer renewed, can
  // expire meanwhile, and etcd revokes it through Raft.
  const port = etcd.cluster.members[0]!.port;
  const proposals = async () =>
    (await metricSum(port, 'etcd_server_proposals_committed_total')) - (await metricSum(port, 'etcd_debugging_lease_revoked_total'));
  const [requestsBefore, proposalsBefore] = [await requests(), await proposals()];
  expect((await renewAll()).every((r) => r.held)).toBe(true);
  expect({ requests: (await requests()) - requestsBefore, proposals: (await proposals()) - proposalsBefore }).toEqual({ requests: 1, proposals: 0 });
  // An admin deletes one leader's key behind the backend's back.
  await raw.delete().key(`batching/${names[7]}/c/a`).exec();
  const after = await renewAll();
  expect(after.map((r) => r.held)).toEqual(names.map((_, i) => i !== 7));
});

test('the renewals of one turn beyond one transaction of compares (128) are still one request, in nested groups; when keys of two groups are gone, only their renewals fail', async () => {
  const b = backend();
  const raw = rawClient();
  const names = Array.from({ length: 300 }, (_, i) => `batch-renew-many-${process.pid}-${i}`);
  const tokens = (await Promise.all(names.map((election) => b.campaign({ election, candidateId: 'a', leaseMs: 3000 })))).map((r) => (r as { token: number }).token);
  const renewAll = () => Promise.all(names.map((election, i) => b.renew({ election, candidateId: 'a', token: tokens[i]!, leaseMs: 3000 })));
  const before = await requests();
  expect((await renewAll()).every((r) => r.held)).toBe(true);
  expect((await requests()) - before).toBe(1);
  const gone = [7, 200];
  for (const i of gone) await raw.delete().key(`batching/${names[i]}/c/a`).exec();
  const after = await renewAll();
  expect(after.map((r) => r.held)).toEqual(names.map((_, i) => !gone.includes(i)));
});
