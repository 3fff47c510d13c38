import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Elector } from '@conclave/core';
import { MysqlBackend } from '@conclave/mysql';
import { startMariadb, type MariadbServer } from '@conclave/mysql/testing';
import { eventually, sleep, uniqueElection } from './mysql-test-env';

// A private mariadbd (own datadir under /tmp, free port), so that killing it disturbs nobody.
let server: MariadbServer;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  server = await startMariadb();
}, 120_000);

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await server?.stop();
}, 60_000);

describe('server killed and restarted', () => {
  test('calls fail fast with BACKEND_UNAVAILABLE, candidates step down, then recover with one leader', async () => {
    const LEASE = 2000;
    const e = uniqueElection('restart');
    const backends = ['A', 'B', 'C'].map(() => new MysqlBackend({ uri: `${server.uri}?table=restart_t`, queryTimeoutMs: 1500 }));
    const electors = backends.map(
      (backend, i) => new Elector({ backend, election: e, candidateId: `cand-${i}`, leaseMs: LEASE, retryMs: 300 }),
    );
    try {
      await Promise.all(electors.map((x) => x.start()));
      await eventually(() => electors.filter((x) => x.isLeader()).length === 1, 'a first leader');
      const first = electors.find((x) => x.isLeader())!;
      const firstToken = first.token!;

      await server.kill();
      // Direct calls reject (never hang) with BACKEND_UNAVAILABLE.
      const started = performance.now();
      await expect(backends[0]!.getLeader(e)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
      expect(performance.now() - started).toBeLessThan(10_000);
      // Nobody can confirm the lease: every candidate is a follower once its deadline passes.
      await eventually(() => electors.every((x) => !x.isLeader()), 'all candidates to step down', LEASE * 3);

      await sleep(500);
      await server.restart();
      await eventually(() => electors.filter((x) => x.isLeader()).length === 1, 'one leader after the restart', 60_000, 50);
      const next = electors.find((x) => x.isLeader())!;
      // The row survived the restart (InnoDB) and every lease ran out meanwhile: a new term.
      expect(next.token!).toBeGreaterThan(firstToken);
      // And it stays one leader for a few renewals.
      for (let i = 0; i < 4; i++) {
        await sleep(LEASE / 3);
        expect(electors.filter((x) => x.isLeader()).length).toBeLessThanOrEqual(1);
      }
      expect(await backends[1]!.getLeader(e)).toMatchObject({ candidateId: next.candidateId, token: next.token });

      // A graceful hand-over still works after the restart (wake-up connections came back too).
      await next.stop();
      await eventually(() => electors.some((x) => x !== next && x.isLeader()), 'a new leader after stop', 10_000);
    } finally {
      await Promise.all(electors.map((x) => x.stop()));
      await Promise.all(backends.map((b) => b.close()));
    }
    expect(unhandled).toEqual([]);
  }, 120_000);

  test('a frozen server (SIGSTOP) makes calls reject with BACKEND_UNAVAILABLE instead of hanging', async () => {
    const backend = new MysqlBackend({ uri: `${server.uri}?table=restart_t`, queryTimeoutMs: 1000 });
    const e = uniqueElection('frozen');
    try {
      expect(await backend.campaign({ election: e, candidateId: 'A', leaseMs: 2000 })).toMatchObject({ role: 'leader' });
      await server.pause();
      const started = performance.now();
      await expect(backend.renew({ election: e, candidateId: 'A', token: 1, leaseMs: 2000 })).rejects.toMatchObject({
        code: 'BACKEND_UNAVAILABLE',
      });
      await expect(backend.getLeader(e)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
      expect(performance.now() - started).toBeLessThan(8_000);
      server.resume();
      await eventually(async () => (await backend.getLeader(e).catch(() => 'down')) !== 'down', 'the server to answer again');
    } finally {
      server.resume();
      await backend.close();
    }
    expect(unhandled).toEqual([]);
  }, 60_000);
});
