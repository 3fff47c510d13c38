import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Exception } from 'node-zookeeper-client';
import { isConclaveError, type ConclaveErrorCode } from '@conclave/core';
import type { CampaignRequest, CampaignResult } from '@conclave/core/spi';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { leaderOf } from '@conclave/test-harness';
import { freePort } from '../../../test-harness/src/servers/free-port';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';
import { RawClients, zkCall } from './raw-clients';

let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);
const rawClients = new RawClients(() => server!.connect);
const run = randomBytes(3).toString('hex');
let n = 0;
const election = (label: string) => `zk-${run}-${label}-${++n}`;
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

async function rejectsWith(promise: Promise<unknown>, code: ConclaveErrorCode): Promise<unknown> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isConclaveError(err, code)).toBe(true);
  return err;
}

/**
 * Campaigns until the answer is not a fence's wait (follower, nobody leading, a time to look
 * again), sleeping that time in between.
 */
async function campaignPastFences(backend: ZookeeperBackend, request: CampaignRequest): Promise<CampaignResult> {
  for (let i = 0; i < 20; i++) {
    const result = await backend.campaign(request);
    if (result.role === 'leader' || result.leaderId !== null || result.leaseRemainingMs === undefined) return result;
    await new Promise((r) => setTimeout(r, result.leaseRemainingMs! + 5));
  }
  throw new Error('the fences never ended');
}

describe('options', () => {
  test.each([
    '',
    '   ',
    'zookeeper://h:2181',
    'h:99999',
    'h:0',
    'h:port',
    'a b:2181',
    'h:2181,',
    'h:2181/chroot/',
    'h:2181/a//b',
    '/chroot',
  ])('connect %p is refused with INVALID_URL before any I/O', (connect) => {
    let thrown: unknown;
    try {
      new ZookeeperBackend({ connect });
    } catch (err) {
      thrown = err;
    }
    expect(isConclaveError(thrown, 'INVALID_URL')).toBe(true);
  });

  test('good connect strings are accepted', () => {
    for (const connect of ['localhost', 'h1:2181,h2:2182', 'h1:2181,h2:2181/app/elections', '[::1]:2181', 'h:2181/']) {
      expect(() => new ZookeeperBackend({ connect })).not.toThrow();
    }
  });

  test('bad options are refused with INVALID_OPTIONS or INVALID_NAME', () => {
    const expectCode = (options: unknown, code: ConclaveErrorCode) => {
      let thrown: unknown;
      try {
        new ZookeeperBackend(options as never);
      } catch (err) {
        thrown = err;
      }
      expect(isConclaveError(thrown, code)).toBe(true);
    };
    expectCode(undefined, 'INVALID_OPTIONS');
    expectCode({}, 'INVALID_OPTIONS');
    expectCode({ connect: 'h:1', client: {} }, 'INVALID_OPTIONS');
    expectCode({ client: {} }, 'INVALID_OPTIONS');
    expectCode({ connect: 'h:1', sessionTimeoutMs: 0 }, 'INVALID_OPTIONS');
    expectCode({ connect: 'h:1', requestTimeoutMs: 1.5 }, 'INVALID_OPTIONS');
    expectCode({ connect: 'h:1', auth: 'nopassword' }, 'INVALID_OPTIONS');
    expectCode({ connect: 'h:1', root: 'conclave' }, 'INVALID_NAME');
    expectCode({ connect: 'h:1', root: '/a/../b' }, 'INVALID_NAME');
    expectCode({ connect: 'h:1', root: '/trailing/' }, 'INVALID_NAME');
  });

  test('an unknown option key throws INVALID_OPTIONS from the constructor, naming it and the close known one', () => {
    expect(() => new ZookeeperBackend({ connect: 'h:1', sessionTimeout: 5000 } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"sessionTimeout".*did you mean sessionTimeoutMs\?/) }),
    );
  });

  test('bad names are refused before any I/O, even with no server', async () => {
    const backend = new ZookeeperBackend({ connect: '127.0.0.1:1', requestTimeoutMs: 60_000 });
    try {
      await rejectsWith(backend.campaign({ election: 'a/b', candidateId: 'x', leaseMs: 1000 }), 'INVALID_NAME');
      await rejectsWith(backend.campaign({ election: 'ok', candidateId: 'has  two spaces', leaseMs: 1000 }), 'INVALID_NAME');
      await rejectsWith(backend.campaign({ election: 'ok', candidateId: 'x NONCE', leaseMs: 1000 }), 'INVALID_NAME');
      // Admin calls take candidate ids, never instance ids.
      await rejectsWith(backend.admin!.forceLeader('ok', 'x nonce'), 'INVALID_NAME');
      await rejectsWith(backend.getLeader('..'), 'INVALID_NAME');
      await rejectsWith(backend.renew({ election: 'ok', candidateId: 'x', token: 1, leaseMs: 0 }), 'INVALID_OPTIONS');
      let thrown: unknown;
      try {
        backend.changes!.watch('a/b', 'x', () => undefined);
      } catch (err) {
        thrown = err;
      }
      expect(isConclaveError(thrown, 'INVALID_NAME')).toBe(true);
    } finally {
      await backend.close();
    }
  });
});

describe('the candidate queue', () => {
  test('the first candidate leads, the next follow in order and are told who leads', async () => {
    const e = election('queue');
    const [a, b, c] = [pool.direct(), pool.direct(), pool.direct()];
    const ra = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    const rb = await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    const rc = await c.campaign({ election: e, candidateId: 'c/with%slash', leaseMs: LEASE });
    expect(ra.role).toBe('leader');
    if (ra.role !== 'leader') return;
    // Never more than two thirds of the 3 000 ms session, never more than asked.
    expect(ra.leaseMs).toBeLessThanOrEqual(2000);
    expect(rb).toEqual({ role: 'follower', leaderId: 'a', token: ra.token });
    expect(rc).toEqual({ role: 'follower', leaderId: 'a', token: ra.token });
    expect(await a.candidates!.list(e)).toEqual(['a', 'b', 'c/with%slash']);
    expect(await c.getLeader(e)).toMatchObject({ candidateId: 'a', token: ra.token });
    // Acquire-or-join: campaigning again changes nothing but the lease, which counts from the
    // confirmation each campaign sends (the time spent before it is taken off).
    const again = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(again).toEqual({ role: 'leader', token: ra.token, leaseMs: expect.any(Number) });
    if (again.role === 'leader') expect(again.leaseMs).toBeLessThanOrEqual(2000);
    expect((await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE })).role).toBe('follower');
    expect(await a.candidates!.list(e)).toHaveLength(3);
  });

  test('release hands over to the successor, which is woken, with a greater token', async () => {
    const e = election('handover');
    const [a, b] = [pool.direct(), pool.direct()];
    const ra = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    let woken = 0;
    const unwatch = b.changes!.watch(e, 'b', () => woken++);
    await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    const aToken = leaderOf(ra).token;
    await a.release({ election: e, candidateId: 'a', token: aToken });
    await a.release({ election: e, candidateId: 'a' }); // idempotent
    const until = Date.now() + 10_000;
    while (woken === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(woken).toBeGreaterThan(0);
    const rb = await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    expect(leaderOf(rb).token).toBeGreaterThan(aToken);
    unwatch();
  });

  test('renew holds only for the holder and its token; release with a stale token does nothing', async () => {
    const e = election('renew');
    const a = pool.direct();
    const ra = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    if (ra.role !== 'leader') throw new Error('a should lead');
    const sent = performance.now();
    const held = await a.renew({ election: e, candidateId: 'a', token: ra.token, leaseMs: LEASE });
    expect(held.held).toBe(true);
    if (held.held) expect(held.leaseMs).toBeLessThanOrEqual(LEASE);
    expect(performance.now() - sent).toBeLessThan(3000);
    expect((await a.renew({ election: e, candidateId: 'a', token: ra.token + 1, leaseMs: LEASE })).held).toBe(false);
    expect((await a.renew({ election: e, candidateId: 'z', token: ra.token, leaseMs: LEASE })).held).toBe(false);
    await a.release({ election: e, candidateId: 'a', token: ra.token - 1 });
    expect(await a.getLeader(e)).toMatchObject({ candidateId: 'a', token: ra.token });
    await a.release({ election: e, candidateId: 'a', token: ra.token });
    expect(await a.getLeader(e)).toBeNull();
    expect((await a.renew({ election: e, candidateId: 'a', token: ra.token, leaseMs: LEASE })).held).toBe(false);
  });

  test('renewals of many elections in one turn are one batch and all hold', async () => {
    const a = pool.direct();
    const elections = Array.from({ length: 50 }, () => election('batch'));
    const tokens = await Promise.all(
      elections.map(async (e) => {
        const r = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
        if (r.role !== 'leader') throw new Error('a should lead');
        return r.token;
      }),
    );
    const results = await Promise.all(
      elections.map((e, i) => a.renew({ election: e, candidateId: 'a', token: tokens[i]!, leaseMs: LEASE })),
    );
    expect(results.every((r) => r.held)).toBe(true);
    // One lease gone: the others in the same batch still hold.
    await a.release({ election: elections[7]!, candidateId: 'a' });
    const again = await Promise.all(
      elections.map((e, i) => a.renew({ election: e, candidateId: 'a', token: tokens[i]!, leaseMs: LEASE })),
    );
    expect(again.map((r) => r.held)).toEqual(elections.map((_, i) => i !== 7));
  });

  test('forceLeader deletes the nodes ahead of the named candidate; the others rejoin behind', async () => {
    const e = election('force');
    const [a, b, c, admin] = [pool.direct(), pool.direct(), pool.direct(), pool.direct()];
    const ra = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    let cWoken = 0;
    c.changes!.watch(e, 'c', () => cWoken++);
    await c.campaign({ election: e, candidateId: 'c', leaseMs: LEASE });
    if (ra.role !== 'leader') throw new Error('a should lead');

    await rejectsWith(admin.admin!.forceLeader(e, 'nobody'), 'NOT_SUPPORTED');
    const forced = await admin.admin!.forceLeader(e, 'c', 5000);
    expect(forced.candidateId).toBe('c');
    expect(forced.token).toBeGreaterThan(ra.token);
    expect(await admin.getLeader(e)).toMatchObject(forced);
    const until = Date.now() + 10_000;
    while (cWoken === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(cWoken).toBeGreaterThan(0);
    // c heads the queue, but a fence makes it wait out the longest lease a could still believe in.
    const fenced = await c.campaign({ election: e, candidateId: 'c', leaseMs: LEASE });
    expect(fenced).toMatchObject({ role: 'follower', leaderId: null, token: null });
    expect((fenced as { leaseRemainingMs: number }).leaseRemainingMs).toBeGreaterThan(LEASE / 2);
    // a's renewal is refused at once: its node is gone.
    expect((await a.renew({ election: e, candidateId: 'a', token: ra.token, leaseMs: LEASE })).held).toBe(false);
    expect(await campaignPastFences(c, { election: e, candidateId: 'c', leaseMs: LEASE })).toMatchObject({
      role: 'leader',
      token: forced.token,
    });
    // The fence went with c's confirmation.
    const raw = await rawClients.open();
    const children = await zkCall<string[]>((cb) => raw.getChildren(`/conclave/${e}`, cb));
    expect(children.filter((name) => name.startsWith('_f_'))).toEqual([]);
    expect((await a.renew({ election: e, candidateId: 'a', token: ra.token, leaseMs: LEASE })).held).toBe(false);
    // Forcing the leader again changes nothing.
    expect(await admin.admin!.forceLeader(e, 'c')).toEqual(forced);
    // b lost its place and rejoins behind c.
    expect(await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE })).toMatchObject({ role: 'follower', leaderId: 'c' });
    expect(await admin.candidates!.list(e)).toEqual(['c', 'b']);
  });

  test('clearLeader deletes only the leader node; the election node and its counter stay', async () => {
    const e = election('clear');
    const [a, b] = [pool.direct(), pool.direct()];
    const ra = await a.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    await b.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    if (ra.role !== 'leader') throw new Error('a should lead');
    await b.admin!.clearLeader(e);
    await b.admin!.clearLeader(e); // clears b now: an admin tool's choice, not an error
    await b.admin!.clearLeader(e); // nobody left: no effect
    expect(await b.getLeader(e)).toBeNull();
    const raw = await rawClients.open();
    const stat = await zkCall<unknown>((cb) => raw.exists(`/conclave/${e}`, cb));
    expect(stat).not.toBeNull();
    const again = await campaignPastFences(a, { election: e, candidateId: 'a', leaseMs: LEASE });
    expect(leaderOf(again).token).toBeGreaterThan(ra.token);
  });
});

describe('connections', () => {
  test('a server that is not there makes calls reject with BACKEND_UNAVAILABLE in bounded time', async () => {
    const port = await freePort();
    const backend = new ZookeeperBackend({ connect: `127.0.0.1:${port}`, requestTimeoutMs: 1000 });
    try {
      const started = performance.now();
      await rejectsWith(backend.campaign({ election: election('dead'), candidateId: 'a', leaseMs: LEASE }), 'BACKEND_UNAVAILABLE');
      await rejectsWith(backend.getLeader(election('dead')), 'BACKEND_UNAVAILABLE');
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await backend.close();
    }
    await rejectsWith(backend.getLeader('x'), 'CLOSED');
    await rejectsWith(backend.campaign({ election: 'x', candidateId: 'a', leaseMs: LEASE }), 'CLOSED');
    await rejectsWith(backend.renew({ election: 'x', candidateId: 'a', token: 1, leaseMs: LEASE }), 'CLOSED');
    await rejectsWith(backend.release({ election: 'x', candidateId: 'a' }), 'CLOSED');
  });

  test('a chroot and digest auth: nodes live under the chroot, with CREATOR_ALL_ACL', async () => {
    const chroot = `/chroot-${run}`;
    const raw = await rawClients.open();
    await zkCall<string>((cb) => raw.create(chroot, cb));
    const e = election('acl');
    const backend = pool.direct({ connect: `${server!.connect}${chroot}`, auth: 'alice:secret', root: '/apps/elect' });
    const r = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(r.role).toBe('leader');
    expect(await zkCall<string[]>((cb) => raw.getChildren(chroot, cb))).toEqual(['apps']);
    // Without alice's credentials the nodes the backend made cannot even be listed.
    const denied = await zkCall<string[]>((cb) => raw.getChildren(`${chroot}/apps/elect`, cb)).catch((err: unknown) => err);
    expect((denied as { getCode(): number }).getCode()).toBe(Exception.NO_AUTH);
    // Another backend with the same credentials sees it.
    const other = pool.direct({ connect: `${server!.connect}${chroot}`, auth: 'alice:secret', root: '/apps/elect' });
    expect(await other.candidates!.list(e)).toEqual(['a']);
  });

  test('a client passed in is used as is and never closed', async () => {
    const client = await rawClients.open();
    const backend = new ZookeeperBackend({ client, root: `/passed-${run}` });
    const e = election('passed');
    expect((await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE })).role).toBe('leader');
    await backend.close();
    await backend.close();
    // Still open: the session (and its node) outlive the backend.
    const children = await zkCall<string[]>((cb) => client.getChildren(`/passed-${run}/${e}`, cb));
    expect(children).toHaveLength(1);
  });
});
