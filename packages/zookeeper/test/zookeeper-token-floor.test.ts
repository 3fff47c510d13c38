import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import type { Stat } from 'node-zookeeper-client';
import { leaderOf } from '@conclave/test-harness';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';
import { RawClients, zkCall } from './raw-clients';

// The token floor: a term's token is its node's czxid plus the offset the election node records
// when the term starts. These tests raise the floor far above the czxids and check that new terms
// go above it, running terms keep their tokens, and elections never raised keep czxid tokens.

let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);
const rawClients = new RawClients(() => server!.connect);
const run = randomBytes(3).toString('hex');
const root = `/floor-${run}`;
let n = 0;
const election = (label: string) => `zk-floor-${run}-${label}-${++n}`;
const LEASE = 1500;

beforeAll(async () => {
  server = await startZookeeperServer();
}, 120_000);

afterEach(async () => {
  await pool.closeAll();
  rawClients.closeAll();
});

afterAll(async () => {
  await server?.close();
});

function zxid(buffer: Buffer): number {
  return Number(Buffer.from(buffer).readBigInt64BE(0));
}

describe('ZooKeeper token floor', () => {
  test('a floor far above the czxids puts the next term above it; the running term keeps its token through renewals', async () => {
    const e = election('far');
    const a = pool.direct({ root });
    const first = leaderOf(await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE }));
    const floor = 1_000_000_000_000; // far above any czxid of a fresh server
    expect(first.token).toBeLessThan(floor);
    await a.tokenFloor!.raise(e, floor);
    for (let i = 0; i < 3; i++) {
      expect(await a.renew({ election: e, candidateId: 'a', token: first.token, leaseMs: LEASE })).toMatchObject({ held: true });
      expect(await a.getLeader(e)).toMatchObject({ candidateId: 'a', token: first.token });
    }
    // Campaigning again while leading is the same term.
    expect(leaderOf(await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE })).token).toBe(first.token);
    await a.release({ election: e, candidateId: 'a' });
    const b = pool.direct({ root });
    const next = leaderOf(await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE }));
    expect(next.token).toBeGreaterThan(floor);
    expect(await a.getLeader(e)).toMatchObject({ candidateId: 'b', token: next.token });
    expect(await b.renew({ election: e, candidateId: 'b', token: next.token, leaseMs: LEASE })).toMatchObject({ held: true });
    // A lower floor changes nothing.
    await a.tokenFloor!.raise(e, 5);
    expect(await b.getLeader(e)).toMatchObject({ candidateId: 'b', token: next.token });
  });

  test('a raise while a follower waits in the queue is not missed when it takes over', async () => {
    const e = election('follower');
    const a = pool.direct({ root });
    const b = pool.direct({ root });
    leaderOf(await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE }));
    // b's node exists (created before the raise) and b has read the floor as it was.
    expect((await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE })).role).toBe('follower');
    const floor = 5_000_000_000_000;
    await a.tokenFloor!.raise(e, floor);
    await a.release({ election: e, candidateId: 'a' });
    const next = leaderOf(await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE }));
    expect(next.token).toBeGreaterThan(floor);
    expect(await a.getLeader(e)).toMatchObject({ candidateId: 'b', token: next.token });
  });

  test('a head that recorded a new floor when it confirmed is still woken at once when its node is deleted', async () => {
    const e = election('rearm');
    const a = pool.direct({ root });
    const b = pool.direct({ root });
    leaderOf(await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE }));
    expect((await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE })).role).toBe('follower');
    await a.tokenFloor!.raise(e, 7_000_000_000_000);
    await a.release({ election: e, candidateId: 'a' });
    // b's confirmation writes the new offset on its node, which fires b's own-node watch once.
    leaderOf(await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE }));
    await new Promise((r) => setTimeout(r, 100));
    let woken = 0;
    const unwatch = b.changes!.watch(e, 'b', () => woken++);
    try {
      await a.admin!.clearLeader(e);
      const started = Date.now();
      while (woken === 0 && Date.now() - started < 1000) await new Promise((r) => setTimeout(r, 10));
      expect(woken).toBeGreaterThan(0);
    } finally {
      unwatch();
    }
  });

  test('a raise racing a campaign: whatever the order, every term that starts after it resolves is above it', async () => {
    const e = election('race');
    const backends = [pool.direct({ root }), pool.direct({ root }), pool.direct({ root })];
    let floor = 0;
    let last = 0;
    for (let i = 0; i < 6; i++) {
      const id = `c${i}`;
      const backend = backends[i % backends.length]!;
      floor += 1_000_000_000;
      const [result] = await Promise.all([
        backend.campaign({ election: e, candidateId: id, leaseMs: LEASE }),
        backends[(i + 1) % backends.length]!.tokenFloor!.raise(e, floor),
      ]);
      const token = leaderOf(result).token;
      expect(token).toBeGreaterThan(last);
      last = token;
      // Whether this term started before or after the raise, the next one starts after it.
      await backend.release({ election: e, candidateId: id });
      const after = leaderOf(await backend.campaign({ election: e, candidateId: `${id}-after`, leaseMs: LEASE }));
      expect(after.token).toBeGreaterThan(floor);
      expect(after.token).toBeGreaterThan(last);
      last = after.token;
      await backend.release({ election: e, candidateId: `${id}-after` });
    }
  });

  test('tokens strictly increase over hand-overs with raises in between, and every process reports the same token', async () => {
    const e = election('handovers');
    const x = pool.direct({ root });
    const y = pool.direct({ root });
    const tokens: number[] = [];
    // Both campaign: one leads, the other waits in the queue through the raises.
    let leader = { backend: x, id: 'x' };
    let follower = { backend: y, id: 'y' };
    tokens.push(leaderOf(await x.campaign({ election: e, candidateId: 'x', leaseMs: LEASE })).token);
    expect((await y.campaign({ election: e, candidateId: 'y', leaseMs: LEASE })).role).toBe('follower');
    for (let i = 1; i <= 5; i++) {
      // Every other round a raise far above, the others a raise below the tokens (no effect).
      const floor = i % 2 === 1 ? tokens[tokens.length - 1]! + 10_000_000 * i : 1;
      await follower.backend.tokenFloor!.raise(e, floor);
      await leader.backend.release({ election: e, candidateId: leader.id });
      const next = leaderOf(await follower.backend.campaign({ election: e, candidateId: follower.id, leaseMs: LEASE }));
      expect(next.token).toBeGreaterThan(tokens[tokens.length - 1]!);
      expect(next.token).toBeGreaterThan(floor);
      for (const b of [x, y]) expect(await b.getLeader(e)).toMatchObject({ candidateId: follower.id, token: next.token });
      tokens.push(next.token);
      // The old leader joins again at the back.
      expect((await leader.backend.campaign({ election: e, candidateId: leader.id, leaseMs: LEASE })).role).toBe('follower');
      [leader, follower] = [follower, leader];
    }
    // forceLeader reports the token the forced candidate then leads with.
    await leader.backend.tokenFloor!.raise(e, tokens[tokens.length - 1]! + 77_000_000);
    const forced = await x.admin!.forceLeader(e, follower.id);
    expect(forced.token).toBeGreaterThan(tokens[tokens.length - 1]! + 77_000_000);
    let result = await follower.backend.campaign({ election: e, candidateId: follower.id, leaseMs: LEASE });
    for (let i = 0; result.role !== 'leader' && i < 20; i++) {
      await new Promise((r) => setTimeout(r, (result as { leaseRemainingMs?: number }).leaseRemainingMs ?? 200));
      result = await follower.backend.campaign({ election: e, candidateId: follower.id, leaseMs: LEASE });
    }
    expect(leaderOf(result).token).toBe(forced.token);
  });

  test('an election whose floor was never raised keeps czxid tokens and leaves the election node as it was', async () => {
    const e = election('plain');
    const a = pool.direct({ root });
    const raw = await rawClients.open();
    const first = leaderOf(await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE }));
    const names = await zkCall<string[]>((cb) => raw.getChildren(`${root}/${e}`, cb));
    expect(names).toHaveLength(1);
    const stat = await zkCall<Stat>((cb) => raw.exists(`${root}/${e}/${names[0]!}`, cb));
    expect(first.token).toBe(zxid(stat.czxid));
    const data = await zkCall<Buffer | undefined>((cb) => raw.getData(`${root}/${e}`, cb));
    expect(data?.length ?? 0).toBe(0);
    // The node's data records no offset either: two lines, as before floors existed.
    const own = await zkCall<Buffer>((cb) => raw.getData(`${root}/${e}/${names[0]!}`, cb));
    expect(own.toString('utf8').split('\n')).toHaveLength(2);
  });

  test('floors that are not non-negative safe integers, or that leave no room, are refused', async () => {
    const a = pool.direct({ root });
    const e = election('bad');
    for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(a.tokenFloor!.raise(e, bad)).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    }
    await expect(a.tokenFloor!.raise(e, Number.MAX_SAFE_INTEGER)).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
