import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Elector, isConclaveError, type ConclaveErrorCode } from '@conclave/core';
import { newInstanceId, type CampaignResult } from '@conclave/core/spi';
import { delay, waitFor } from '../../../test-harness/src/wait-for';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { decodeId, encodeId, nodePrefix, parseNodeName } from '../src/zookeeper-nodes';
import { BackendPool } from './zookeeper-fixtures';

// Instance ids (`<candidate id> <nonce>`, one per Elector): two processes started with the same
// candidate id are two candidacies, never one shared term.
let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);
const run = randomBytes(3).toString('hex');
let n = 0;
const election = (label: string) => `zk-inst-${run}-${label}-${++n}`;
const LEASE = 1500;
const GUID = 'f'.repeat(32);

beforeAll(async () => {
  server = await startZookeeperServer();
}, 120_000);

afterEach(async () => {
  await pool.closeAll();
});

afterAll(async () => {
  await server?.close();
});

async function rejectsWith(promise: Promise<unknown>, code: ConclaveErrorCode): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isConclaveError(err, code)).toBe(true);
}

function leaderToken(result: CampaignResult): number {
  if (result.role !== 'leader') throw new Error(`expected to lead, got ${JSON.stringify(result)}`);
  return result.token;
}

describe('node names', () => {
  test.each(['web-1', 'web-1 0a1b2c3d4e5f', 'a%20b', 'a/b c', '%%2F %25', 'x-0000000001 z', '-'])(
    'the id %j goes through a node name unchanged',
    (id) => {
      const name = nodePrefix('/conclave/e', GUID, id).slice('/conclave/e/'.length) + '0000000042';
      expect(name).not.toMatch(/[ /]/);
      expect(decodeId(encodeId(id))).toBe(id);
      expect(parseNodeName(name)).toEqual({ name, guid: GUID, candidateId: id, sequence: 42 });
    },
  );

  test('names written before spaces were encoded still parse as they did', () => {
    // '%' was already encoded as %25 and '/' as %2F; an id never held a space.
    expect(parseNodeName(`_c_${GUID}-a%2520b%2Fc-0000000007`)?.candidateId).toBe('a%20b/c');
    expect(parseNodeName(`_c_${GUID}-host:12:ab-0000000007`)?.candidateId).toBe('host:12:ab');
  });
});

describe('two instances of one candidate id', () => {
  test.each([
    ['on one backend (one session)', false],
    ['on two backends (two sessions)', true],
  ])('%s: one leads, the other follows it and sees its full instance id', async (_label, twoBackends) => {
    const e = election('dup');
    const first = pool.direct();
    const second = twoBackends ? pool.direct() : first;
    const a = newInstanceId('web');
    const b = newInstanceId('web');
    const tokenA = leaderToken(await first.campaign({ election: e, candidateId: a, leaseMs: LEASE }));
    const followed = await second.campaign({ election: e, candidateId: b, leaseMs: LEASE });
    expect(followed).toEqual({ role: 'follower', leaderId: a, token: tokenA });
    // Asked again, still one leader: b never joins a's term.
    expect((await second.campaign({ election: e, candidateId: b, leaseMs: LEASE })).role).toBe('follower');
    expect((await first.campaign({ election: e, candidateId: a, leaseMs: LEASE })).role).toBe('leader');
    // b cannot renew a's term, and that does not end it.
    expect(await second.renew({ election: e, candidateId: b, token: tokenA, leaseMs: LEASE })).toEqual({ held: false, leaderId: null });
    expect((await first.renew({ election: e, candidateId: a, token: tokenA, leaseMs: LEASE })).held).toBe(true);
    // Admin views show the user's id once.
    expect(await first.getLeader(e)).toMatchObject({ candidateId: 'web', token: tokenA });
    expect(await first.candidates!.list(e)).toEqual(['web']);

    // a goes: b takes over with a greater token.
    await first.release({ election: e, candidateId: a, token: tokenA });
    const tokenB = leaderToken(await second.campaign({ election: e, candidateId: b, leaseMs: LEASE }));
    expect(tokenB).toBeGreaterThan(tokenA);
    // a's old term is over; a comes back behind b.
    expect((await first.renew({ election: e, candidateId: a, token: tokenA, leaseMs: LEASE })).held).toBe(false);
    expect(await first.campaign({ election: e, candidateId: a, leaseMs: LEASE })).toEqual({ role: 'follower', leaderId: b, token: tokenB });
  });

  test('a leader whose node was deleted learns which instance leads now', async () => {
    const e = election('renew-leader');
    const backend = pool.direct();
    const other = pool.direct();
    const a = newInstanceId('web');
    const b = newInstanceId('web');
    const tokenA = leaderToken(await backend.campaign({ election: e, candidateId: a, leaseMs: LEASE }));
    await other.campaign({ election: e, candidateId: b, leaseMs: LEASE });
    await other.admin!.clearLeader(e);
    expect(await backend.renew({ election: e, candidateId: a, token: tokenA, leaseMs: LEASE })).toEqual({ held: false, leaderId: b });
  });

  test('forceLeader with the bare candidate id promotes that candidate’s first node', async () => {
    const e = election('force');
    const admin = pool.direct();
    const lead = pool.direct();
    const web = pool.direct();
    const x = newInstanceId('other');
    const w1 = newInstanceId('web');
    const w2 = newInstanceId('web');
    const tokenX = leaderToken(await lead.campaign({ election: e, candidateId: x, leaseMs: LEASE }));
    await web.campaign({ election: e, candidateId: w1, leaseMs: LEASE });
    await web.campaign({ election: e, candidateId: w2, leaseMs: LEASE });
    const forced = await admin.admin!.forceLeader(e, 'web');
    expect(forced.candidateId).toBe('web');
    expect(forced.token).toBeGreaterThan(tokenX);
    // w1 heads the queue; it leads once the fence has waited out x's longest lease.
    let result = await web.campaign({ election: e, candidateId: w1, leaseMs: LEASE });
    expect(result).toMatchObject({ role: 'follower', leaderId: null, token: null });
    await new Promise((r) => setTimeout(r, (result as { leaseRemainingMs: number }).leaseRemainingMs + 5));
    result = await web.campaign({ election: e, candidateId: w1, leaseMs: LEASE });
    expect(result).toEqual({ role: 'leader', token: forced.token, leaseMs: expect.any(Number) });
    expect(await web.campaign({ election: e, candidateId: w2, leaseMs: LEASE })).toMatchObject({ role: 'follower', leaderId: w1 });
    expect(await admin.getLeader(e)).toMatchObject({ candidateId: 'web', token: forced.token });
    expect(await admin.candidates!.list(e)).toEqual(['web']);
    // An instance id is not an admin name.
    await rejectsWith(admin.admin!.forceLeader(e, w1), 'INVALID_NAME');
  });

  test('ids are validated before any I/O', async () => {
    const backend = pool.direct();
    const e = election('validate');
    for (const bad of ['web ', 'web  abc', 'web ABC', 'web a-b', ' abc', `web ${'a'.repeat(33)}`, 'a b c']) {
      await rejectsWith(backend.campaign({ election: e, candidateId: bad, leaseMs: LEASE }), 'INVALID_NAME');
      await rejectsWith(backend.renew({ election: e, candidateId: bad, token: 1, leaseMs: LEASE }), 'INVALID_NAME');
      await rejectsWith(backend.release({ election: e, candidateId: bad }), 'INVALID_NAME');
      await rejectsWith(Promise.resolve().then(() => backend.changes!.watch(e, bad, () => {})), 'INVALID_NAME');
    }
    // Bare candidate ids are still instance ids of their own (an older core, admin tools).
    expect((await backend.campaign({ election: e, candidateId: 'web', leaseMs: LEASE })).role).toBe('leader');
  });

  test('two Electors started with the same candidate id in two processes never lead together', async () => {
    const e = election('electors');
    const electors = [pool.direct(), pool.direct()].map((backend) => new Elector({ backend, election: e, candidateId: 'web', leaseMs: LEASE }));
    const both: number[] = [];
    const timer = setInterval(() => {
      if (electors.every((x) => x.isLeader())) both.push(Date.now());
    }, 1);
    try {
      await Promise.all(electors.map((x) => x.start()));
      await waitFor(() => electors.some((x) => x.isLeader()), 'one of them to lead');
      await delay(LEASE);
      const leader = electors.find((x) => x.isLeader())!;
      const other = electors.find((x) => x !== leader)!;
      const token = leader.token!;
      await leader.stop();
      await waitFor(() => other.isLeader(), 'the other one to take over');
      expect(other.token!).toBeGreaterThan(token);
    } finally {
      clearInterval(timer);
      await Promise.all(electors.map((x) => x.stop()));
    }
    expect(both).toEqual([]);
  });
});
