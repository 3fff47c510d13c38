import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { CreateMode, State, type Client } from 'node-zookeeper-client';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { leaderOf } from '@conclave/test-harness';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';
import { RawClients, zkCall } from './raw-clients';

// A candidate must never hold two nodes in one session: the older one would sit in the queue
// (possibly at its head) for the whole session, and the candidate would follow itself — it is
// told that it leads while it follows, and nobody leads until the session ends. These tests make
// such a "stray" by hand (the same session, a node with the candidate's id) or by the call
// overlap that made them under connection faults, and check that the backend gets rid of it.

let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);
const rawClients = new RawClients(() => server!.connect);
const run = randomBytes(3).toString('hex');
const root = `/strays-${run}`;
let n = 0;
const election = (label: string) => `zk-strays-${run}-${label}-${++n}`;
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

/** Creates, in `client`'s session, a protected node for `candidateId` as the backend would name it. */
async function makeStray(client: Client, e: string, candidateId: string): Promise<string> {
  await zkCall<string>((cb) => client.mkdirp(`${root}/${e}`, cb));
  const guid = randomBytes(16).toString('hex');
  const path = await zkCall<string>((cb) =>
    client.create(`${root}/${e}/_c_${guid}-${candidateId}-`, Buffer.from(candidateId), CreateMode.EPHEMERAL_SEQUENTIAL, cb),
  );
  return path.slice(path.lastIndexOf('/') + 1);
}

async function children(client: Client, e: string, electionRoot = root): Promise<string[]> {
  return (await zkCall<string[]>((cb) => client.getChildren(`${electionRoot}/${e}`, cb))).sort();
}

const ofCandidate = (names: string[], id: string) => names.filter((name) => name.includes(`-${id}-`));

async function waitForState(client: Client, state: State, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (client.getState() !== state) {
    if (Date.now() > until) throw new Error(`client not ${String(state)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('one node per candidate and session', () => {
  test('a stray node of the candidate at the head of the queue is deleted, and the candidate leads', async () => {
    const client = await rawClients.open();
    const backend = new ZookeeperBackend({ client, root });
    const e = election('head');
    const stray = await makeStray(client, e, 'a');

    // Without the sweep, `a` would join behind its own stray and be told that `a` leads while
    // it follows, until the session ends.
    const result = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(result.role).toBe('leader');
    const names = await children(client, e);
    expect(names).not.toContain(stray);
    expect(ofCandidate(names, 'a')).toHaveLength(1);
    if (result.role !== 'leader') return;
    expect(await backend.getLeader(e)).toMatchObject({ candidateId: 'a', token: result.token });
    expect(await backend.renew({ election: e, candidateId: 'a', token: result.token, leaseMs: LEASE })).toMatchObject({ held: true });

    // Leadership works as usual: another candidate follows it and takes over on release.
    const other = pool.direct({ root });
    expect(await other.campaign({ election: e, candidateId: 'b', leaseMs: LEASE })).toMatchObject({ role: 'follower', leaderId: 'a' });
    await backend.release({ election: e, candidateId: 'a', token: result.token });
    const next = await other.campaign({ election: e, candidateId: 'b', leaseMs: LEASE });
    expect(leaderOf(next).token).toBeGreaterThan(result.token);
    await backend.close();
  });

  test('a stray behind the leader is deleted at its next campaign; the term goes on with its token', async () => {
    const client = await rawClients.open();
    const backend = new ZookeeperBackend({ client, root });
    const e = election('behind');
    const first = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(first.role).toBe('leader');
    const stray = await makeStray(client, e, 'a');
    expect(ofCandidate(await children(client, e), 'a')).toHaveLength(2);

    const again = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(leaderOf(again).token).toBe(leaderOf(first).token);
    const names = await children(client, e);
    expect(names).not.toContain(stray);
    expect(ofCandidate(names, 'a')).toHaveLength(1);
    await backend.close();
  });

  test('a stray of a follower, ahead of it, is deleted and the follower is told the real leader', async () => {
    const client = await rawClients.open();
    const backend = new ZookeeperBackend({ client, root });
    const e = election('follower');
    const leader = pool.direct({ root });
    expect((await leader.campaign({ election: e, candidateId: 'l', leaseMs: LEASE })).role).toBe('leader');
    const stray = await makeStray(client, e, 'a');
    const result = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(result).toMatchObject({ role: 'follower', leaderId: 'l' });
    const names = await children(client, e);
    expect(names).not.toContain(stray);
    expect(ofCandidate(names, 'a')).toHaveLength(1);
    await backend.close();
  });

  test('nodes with the same candidate id in another session are left alone', async () => {
    const mine = await rawClients.open();
    const theirs = await rawClients.open();
    const backend = new ZookeeperBackend({ client: mine, root });
    const e = election('foreign');
    const foreign = await makeStray(theirs, e, 'a');
    const result = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    // The foreign node is first in the queue: `a` (of this session) follows it.
    expect(result).toMatchObject({ role: 'follower', leaderId: 'a' });
    const names = await children(mine, e);
    expect(names).toContain(foreign);
    expect(ofCandidate(names, 'a')).toHaveLength(2);
    await backend.release({ election: e, candidateId: 'a' });
    expect(await children(mine, e)).toEqual([foreign]);
    await backend.close();
  });

  test('release withdraws every node of the candidate in the session, strays included', async () => {
    const client = await rawClients.open();
    const backend = new ZookeeperBackend({ client, root });
    const e = election('release');
    const result = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(result.role).toBe('leader');
    await makeStray(client, e, 'a');
    await backend.release({ election: e, candidateId: 'a', token: result.role === 'leader' ? result.token : null });
    expect(await children(client, e)).toEqual([]);
    await backend.close();
  });

  test('a release and a campaign that overlap across a disconnection leave one node, and it leads', async () => {
    // The core stops waiting for a release after leaseMs and for a campaign after
    // leaseMs - safetyMargin, shorter than requestTimeoutMs, and campaigns again while the call
    // it gave up on still waits for the connection. Here both are sent while the client is
    // disconnected and reach the server together once it reconnects.
    const { backend, proxy } = await pool.proxied({ root });
    const observer = await rawClients.open();
    const e = election('overlap');
    const first = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(first.role).toBe('leader');
    const token = first.role === 'leader' ? first.token : null;

    proxy.cut();
    const client = (backend as unknown as { session: { client: Client } }).session.client;
    await waitForState(client, State.DISCONNECTED);
    const release = backend.release({ election: e, candidateId: 'a', token });
    const campaign = backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    await new Promise((r) => setTimeout(r, 300));
    proxy.resume();
    await release;
    const second = await campaign;

    // Whatever each call found, the candidate has one node, leads on it, and can renew it.
    const names = ofCandidate(await children(observer, e), 'a');
    expect(names).toHaveLength(1);
    expect(second.role).toBe('leader');
    const third = await backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE });
    expect(third).toMatchObject({ role: 'leader' });
    if (second.role !== 'leader' || third.role !== 'leader') return;
    expect(third.token).toBe(second.token);
    expect(second.token).toBeGreaterThan(token!);
    expect(await backend.renew({ election: e, candidateId: 'a', token: third.token, leaseMs: LEASE })).toMatchObject({ held: true });
    expect(ofCandidate(await children(observer, e), 'a')).toHaveLength(1);
  });

  test('a campaign the caller gave up on does not run alongside the next one', async () => {
    const { backend, proxy } = await pool.proxied({ root });
    const observer = await rawClients.open();
    const e = election('abandoned');
    proxy.cut();
    // Three campaigns sent while disconnected (the core would have given up on the first two).
    const calls = [0, 1, 2].map(() => backend.campaign({ election: e, candidateId: 'a', leaseMs: LEASE }));
    await new Promise((r) => setTimeout(r, 300));
    proxy.resume();
    const results = await Promise.all(calls);
    const tokens = new Set(results.map((r) => (r.role === 'leader' ? r.token : null)));
    expect(tokens.size).toBe(1);
    expect(tokens.has(null)).toBe(false);
    expect(ofCandidate(await children(observer, e), 'a')).toHaveLength(1);
  });
});
