import { Elector } from '@conclave/core';
import { RedisBackend } from '@conclave/redis';
import { RedisServer, startRedisServers } from '@conclave/redis/testing';
import { freePort } from '../../../test-harness/src/servers/free-port';
import { ControlledBackend as HangableBackend } from '../../../test-harness/src/controlled-backend';
import { BackendPool, pastRestartFence, uniqueName, uniquePrefix, waitFor } from './helpers';

/**
 * A master that lost its state (restarted without persistence) grants no new term until every
 * lease it could have granted before has ended, so a candidate that reaches it first cannot lead
 * beside the leader whose lease still runs.
 */
// Long enough that the leader's lease surely outlasts a restart and a reconnect on a slow machine.
const LEASE = 4000;
const pool = new BackendPool();
afterEach(() => pool.closeAll());

function elector(backend: RedisBackend | HangableBackend, election: string, candidateId: string, retryMs = 50): Elector {
  // A short retryMs: the follower campaigns again and again while the master comes back.
  return new Elector({ backend, election, candidateId, leaseMs: LEASE, retryMs });
}

/**
 * Campaigns with `backend` every few ms, as an eager candidate would, until it wins, the
 * incumbent starts a term after `sinceToken`, or `forMs` passes. Says who got there first, and
 * whether the incumbent still led when the eager one won.
 */
async function raceFor(
  backend: RedisBackend,
  election: string,
  incumbent: Elector,
  sinceToken: number,
  forMs: number,
): Promise<{ eager: { token: number; incumbentLeading: boolean } | null; incumbentToken: number | null }> {
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    const result = await backend.campaign({ election, candidateId: 'eager 1', leaseMs: LEASE }).catch(() => null);
    if (result?.role === 'leader') return { eager: { token: result.token, incumbentLeading: incumbent.isLeader() }, incumbentToken: null };
    const token = incumbent.token;
    if (token !== null && token > sinceToken) return { eager: null, incumbentToken: token };
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`nobody started a new term within ${forMs} ms`);
}

describe('the restart fence', () => {
  test('one master restarted empty: the next term starts only after the leader’s lease, with a greater token', async () => {
    const server = await RedisServer.start();
    let a: Elector | null = null;
    try {
      await pastRestartFence([server.url], LEASE);
      const election = uniqueName();
      const keyPrefix = uniquePrefix();
      const aBackend = new HangableBackend(pool.redis({ url: server.url, keyPrefix }));
      a = elector(aBackend, election, 'a', LEASE / 5);
      await a.start();
      await waitFor(() => a!.isLeader(), 5000, 'a to lead');
      const firstToken = a.token!;
      // A's calls stall from now until a moment after the restart (a pause, a slow reconnect), so
      // the eager candidate reaches the restarted server first while A's lease still runs.
      aBackend.hang();
      await server.kill();
      await new Promise((r) => setTimeout(r, 200));
      await server.restart();
      setTimeout(() => aBackend.unhang(), 400);
      const eager = pool.redis({ url: server.url, keyPrefix, commandTimeoutMs: 200 });
      const race = await raceFor(eager, election, a, firstToken, LEASE * 6);
      // Whoever starts the next term does so after A's lease, with a greater token.
      if (race.eager) {
        expect(race.eager.incumbentLeading).toBe(false);
        expect(race.eager.token).toBeGreaterThan(firstToken);
      } else {
        expect(race.incumbentToken!).toBeGreaterThan(firstToken);
      }
    } finally {
      await a?.stop();
      await server.stop();
    }
  }, 60_000);

  test('a fresh master tells a follower when the fence ends, and grants the term then', async () => {
    const server = await RedisServer.start();
    try {
      const backend = pool.redis({ url: server.url, keyPrefix: uniquePrefix() });
      const election = uniqueName();
      const fenced = await backend.campaign({ election, candidateId: 'a', leaseMs: 4000 });
      expect(fenced).toMatchObject({ role: 'follower', leaderId: null, token: null });
      const wait = (fenced as { leaseRemainingMs: number }).leaseRemainingMs;
      expect(wait).toBeGreaterThan(1000);
      expect(wait).toBeLessThanOrEqual(4000);
      await new Promise((r) => setTimeout(r, wait + 20));
      expect(await backend.campaign({ election, candidateId: 'a', leaseMs: 4000 })).toMatchObject({ role: 'leader' });
    } finally {
      await server.stop();
    }
  }, 30_000);

  test('quorum: a minority master restarted empty does not let an eager candidate win beside the leader', async () => {
    // A holds masters 1 and 2 and cannot reach master 3 (its third address is a dead port);
    // master 2 restarts empty; the eager candidate reaches all three and campaigns all the while.
    const servers: RedisServer[] = await startRedisServers(3);
    let a: Elector | null = null;
    try {
      await pastRestartFence(servers.map((s) => s.url), LEASE);
      const dead = `redis://127.0.0.1:${await freePort()}`;
      const election = uniqueName();
      const keyPrefix = uniquePrefix();
      const aBackend = new HangableBackend(pool.redis({ urls: [servers[0]!.url, servers[1]!.url, dead], keyPrefix, commandTimeoutMs: 300 }));
      a = elector(aBackend, election, 'a', LEASE / 5);
      await a.start();
      await waitFor(() => a!.isLeader(), 5000, 'a to lead');
      const firstToken = a.token!;
      // A's calls stall from now until a moment after the restart (a pause, a slow reconnect), so
      // the eager candidate reaches the restarted server first while A's lease still runs.
      aBackend.hang();
      await servers[1]!.kill();
      await new Promise((r) => setTimeout(r, 200));
      await servers[1]!.restart();
      setTimeout(() => aBackend.unhang(), 400);
      const eager = pool.redis({ urls: servers.map((s) => s.url), keyPrefix, commandTimeoutMs: 300 });
      // A repairs master 2 within the fence and keeps leading; if the eager one ever wins, A
      // must have stopped leading first.
      const race = await raceFor(eager, election, a, firstToken, LEASE * 3).catch(() => null);
      if (race?.eager) {
        expect(race.eager.incumbentLeading).toBe(false);
        expect(race.eager.token).toBeGreaterThan(firstToken);
      } else if (race === null) {
        expect(a.isLeader()).toBe(true);
        expect(a.token).toBe(firstToken);
      } else {
        expect(race.incumbentToken!).toBeGreaterThan(firstToken);
      }
    } finally {
      await a?.stop();
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, 60_000);
});
