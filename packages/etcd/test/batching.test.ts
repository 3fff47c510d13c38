import { afterAll, expect, test } from '@jest/globals';
import { Etcd3 } from 'etcd3';
import type { WatchClient } from 'etcd3/lib/rpc';
import { EtcdBackend } from '@conclave/etcd';
import { startTcpProxy } from '@conclave/test-harness/tools';
import { WatchStream } from '../src/etcd-watch-stream';
import { eventually, kvRequests, privateEtcd } from './etcd-test-env';

// A process that campaigns in thousands of elections at once (all its Electors started
// together, or the successors of a process that led them all) sends their transactions in
// batches, and sets up its candidates' watches without waiting for each other. Neither may
// change what one election sees.

const etcd = privateEtcd();
const opened: Array<{ close(): Promise<void> | void }> = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

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

const requests = () => kvRequests(etcd.cluster.members[0]!.port);

test('the campaigns of 100 elections started in one turn go out in batches: a few transactions, not one or two per election', async () => {
  const b = backend();
  const name = (i: number) => `batch-many-${process.pid}-${i}`;
  const before = await requests();
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => b.campaign({ election: name(i), candidateId: 'a', leaseMs: 3000 })));
  const sent = (await requests()) - before;
  expect(results.every((r) => r.role === 'leader')).toBe(true);
  // One batch creates the 100 keys and reads each election, one more starts the 100 terms;
  // alone, each campaign is two transactions.
  expect(sent).toBeLessThanOrEqual(4);
  // Each election's own: every key is there, with its election's token.
  for (let i = 0; i < 100; i += 33) expect((await b.getLeader(name(i)))?.token).toBe((results[i] as { token: number }).token);
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
  const unwatch = b.watch(election, 'b', () => woken++);
  try {
    const before = await requests();
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
    await eventually(() => b.isWatching(election, 'b'), 'b watching');
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
  const watchClient = new Proxy(raw.watchClient, {
    get(target, prop, receiver) {
      if (prop !== 'watch') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<WatchClient['watch']>) => {
        const stream = await target.watch(...args);
        const write = stream.write.bind(stream);
        stream.write = ((req: { create_request?: unknown }) => {
          if (req.create_request) written++;
          return write(req as never);
        }) as typeof stream.write;
        return stream;
      };
    },
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
  const watchClient = new Proxy(raw.watchClient, {
    get(target, prop, receiver) {
      if (prop !== 'watch') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<WatchClient['watch']>) => {
        const stream = await target.watch(...args);
        const write = stream.write.bind(stream);
        stream.write = ((req: { create_request?: unknown }) => {
          if (req.create_request) void gate.then(() => write(req as never));
          else write(req as never);
          return true;
        }) as typeof stream.write;
        return stream;
      };
    },
  });
  const b = new EtcdBackend({ client: { kv: raw.kv, leaseClient: raw.leaseClient, watchClient, close: () => undefined }, prefix: 'batching/' });
  opened.push(b);
  const a = backend();
  const election = `batch-between-${process.pid}`;
  const leader = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  let woken = 0;
  const unwatch = b.watch(election, 'b', () => woken++);
  try {
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: 3000 })).role).toBe('follower');
    await a.release({ election, candidateId: 'a', token: (leader as { token: number }).token });
    open();
    await eventually(() => woken > 0, 'b woken', 5_000);
  } finally {
    unwatch();
  }
});
