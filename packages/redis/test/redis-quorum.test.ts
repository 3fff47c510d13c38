import { Elector, isConclaveError } from '@conclave/core';
import Redis from 'ioredis';
import { RedisBackend, electionKeys } from '@conclave/redis';
import { RedisServer, startRedisServers } from '@conclave/redis/testing';
import { BackendPool, pastRestartFence, uniqueName, uniquePrefix, waitFor } from './helpers';

let servers: RedisServer[] = [];
const pool = new BackendPool();
beforeAll(async () => {
  servers = await startRedisServers(3);
  await pastRestartFence(servers.map((s) => s.url), 10_000);
}, 30_000);
afterEach(() => pool.closeAll());
afterAll(() => Promise.all(servers.map((s) => s.stop())));

function quorum(prefix: string, extra: Partial<ConstructorParameters<typeof RedisBackend>[0]> = {}): RedisBackend {
  return pool.redis({ urls: servers.map((s) => s.url), keyPrefix: prefix, ...extra });
}

describe('RedisBackend quorum mode', () => {
  test('the granted lease keeps the drift allowance back; tokens grow across clear and force', async () => {
    const b = quorum(uniquePrefix(), { tokenClockFloor: false });
    const election = uniqueName();
    const first = await b.campaign({ election, candidateId: 'a', leaseMs: 5000 });
    expect(first).toEqual({ role: 'leader', token: 1, leaseMs: 5000 - 50 - 2 });
    expect(await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })).toMatchObject({ role: 'leader', token: 1 });
    const follower = await b.campaign({ election, candidateId: 'b', leaseMs: 5000 });
    expect(follower).toMatchObject({ role: 'follower', leaderId: 'a', token: 1 });
    expect((follower as { leaseRemainingMs: number }).leaseRemainingMs).toBeGreaterThan(0);
    expect(await b.renew({ election, candidateId: 'b', token: 1, leaseMs: 5000 })).toEqual({ held: false, leaderId: 'a' });
    await b.release({ election, candidateId: 'b' });
    expect(await b.getLeader(election)).toMatchObject({ candidateId: 'a', token: 1 });
    await b.admin!.clearLeader(election);
    expect(await b.getLeader(election)).toBeNull();
    // The revoked lease keeps everyone out until it ends (a tombstone held by nobody).
    expect(await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })).toMatchObject({ role: 'follower', leaderId: null, token: null });
    await waitFor(async () => (await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })).role === 'leader', 10_000, 'the tombstone to end');
    const t2 = ((await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })) as { token: number }).token;
    expect(t2).toBe(2);
    const forced = await b.admin!.forceLeader(election, 'c', 5000);
    expect(forced.token).toBe(3);
    expect(await b.renew({ election, candidateId: 'b', token: t2, leaseMs: 5000 })).toMatchObject({ held: false, leaderId: 'c' });
    // Others by when they are forgotten: b, on a shorter lease, before a.
    expect(await b.candidates!.list(election)).toEqual(['c', 'b', 'a']);
  });

  test('a leader keeps its lease with one master down, and loses it (UNAVAILABLE) with two down', async () => {
    const local = await startRedisServers(3);
    try {
      await pastRestartFence(local.map((s) => s.url), 3000);
      const prefix = uniquePrefix();
      const prefixOf = (_: RedisBackend) => prefix;
      const b = pool.redis({ urls: local.map((s) => s.url), keyPrefix: prefix });
      const election = uniqueName();
      const { token } = (await b.campaign({ election, candidateId: 'a', leaseMs: 3000 })) as { token: number };
      await local[0]!.kill();
      expect((await b.renew({ election, candidateId: 'a', token, leaseMs: 3000 })).held).toBe(true);
      expect(await b.campaign({ election, candidateId: 'b', leaseMs: 3000 })).toMatchObject({ role: 'follower', leaderId: 'a' });
      await local[1]!.kill();
      const lost = await b.renew({ election, candidateId: 'a', token, leaseMs: 3000 }).catch((e: unknown) => e);
      expect(isConclaveError(lost, 'BACKEND_UNAVAILABLE')).toBe(true);
      // A restarted (empty) master is repaired by the next renewal, so the term survives the loss of another.
      await local[0]!.restart();
      await local[1]!.restart();
      const probes = [new Redis(local[0]!.url), new Redis(local[1]!.url)];
      try {
        const { lease } = electionKeys(prefixOf(b), election);
        await waitFor(
          async () => {
            const renewed = await b.renew({ election, candidateId: 'a', token, leaseMs: 3000 }).catch(() => null);
            const there = await Promise.all(probes.map((p) => p.hget(lease, 'token')));
            return renewed?.held === true && there.every((t) => t === String(token));
          },
          10_000,
          'both restarted masters to hold the term again',
        );
      } finally {
        probes.forEach((p) => p.disconnect());
      }
      await local[2]!.kill();
      expect((await b.renew({ election, candidateId: 'a', token, leaseMs: 3000 })).held).toBe(true);
    } finally {
      await pool.closeAll();
      await Promise.all(local.map((s) => s.stop()));
    }
  });

  test('a renewal that finds a majority of masters emptied (restarted without persistence) repairs them and keeps the term', async () => {
    const prefix = uniquePrefix();
    const b = quorum(prefix);
    const election = uniqueName();
    const { token } = (await b.campaign({ election, candidateId: 'a', leaseMs: 10_000 })) as { token: number };
    // Two masters come back empty at once (the restart itself is left out: the fence it sets
    // only refuses new terms, and a repair is not one).
    const direct = servers.slice(0, 2).map((s) => new Redis(s.url));
    try {
      await Promise.all(direct.map((r) => r.flushall()));
      // One master still holds the lease and two took it back: a term in doubt, not a lost one.
      const first = await b.renew({ election, candidateId: 'a', token, leaseMs: 10_000 }).catch((e: unknown) => e);
      expect(isConclaveError(first, 'BACKEND_UNAVAILABLE')).toBe(true);
      expect(await b.renew({ election, candidateId: 'a', token, leaseMs: 10_000 })).toMatchObject({ held: true });
      const { lease } = electionKeys(prefix, election);
      expect(await Promise.all(direct.map((r) => r.hget(lease, 'token')))).toEqual([String(token), String(token)]);
    } finally {
      direct.forEach((r) => r.disconnect());
    }
  });

  test('Electors hand over on release, woken by pub/sub on every master', async () => {
    const prefix = uniquePrefix();
    const election = uniqueName();
    const opts = { election, leaseMs: 10_000, retryMs: 8000 }; // a quick take-over can only come from the message
    const a = new Elector({ ...opts, backend: quorum(prefix), candidateId: 'a' });
    const b = new Elector({ ...opts, backend: quorum(prefix), candidateId: 'b' });
    try {
      await a.start();
      await b.start();
      expect(a.isLeader()).toBe(true);
      const t1 = a.token!;
      await new Promise((r) => setTimeout(r, 300)); // let b's SUBSCRIBEs land
      const started = Date.now();
      await a.stop();
      await waitFor(() => b.isLeader(), 5000, 'b to take over');
      expect(Date.now() - started).toBeLessThan(4000);
      expect(b.token!).toBeGreaterThan(t1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
