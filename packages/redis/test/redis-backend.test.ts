import Redis from 'ioredis';
import { isConclaveError } from '@conclave/core';
import { RedisBackend } from '@conclave/redis';
import { RedisServer } from '@conclave/redis/testing';
import { BackendPool, SHARED_URL, pastRestartFence, uniqueName, uniquePrefix, waitFor } from './helpers';

const pool = new BackendPool();
afterEach(() => pool.closeAll());

async function code(promise: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    return isConclaveError(err) ? err.code : `not a ConclaveError: ${String(err)}`;
  }
  return undefined;
}

describe('RedisBackend options', () => {
  test('bad URLs are INVALID_URL before any I/O', async () => {
    for (const url of ['', 'http://localhost:6379', 'redis://', 'redis://h:99999', 'redis://h:6379/notadb', 'redis://a,,b']) {
      expect(await code(() => new RedisBackend({ url }))).toBe('INVALID_URL');
    }
    expect(await code(() => new RedisBackend({ urls: ['redis://a:1', 'redis://a:1'] }))).toBe('INVALID_URL');
  });

  test('bad options and prefixes are rejected in the constructor', async () => {
    expect(await code(() => new RedisBackend({} as never))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, urls: [SHARED_URL] }))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ client: {} as never }))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, keyPrefix: 'a{b}' }))).toBe('INVALID_NAME');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, keyPrefix: '' }))).toBe('INVALID_NAME');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, defaultLeaseMs: 0 }))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, driftFactor: 0.9 }))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, publish: 'yes' as never }))).toBe('INVALID_OPTIONS');
    expect(await code(() => new RedisBackend({ url: SHARED_URL, keyspaceEvents: 'on' as never }))).toBe('INVALID_OPTIONS');
  });

  test('an unknown option key throws INVALID_OPTIONS naming it and the close known one; redisOptions go to ioredis unchecked', () => {
    expect(() => pool.redis({ url: SHARED_URL, keyprefix: 'x:' } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"keyprefix".*did you mean keyPrefix\?/) }),
    );
    expect(() => pool.redis({ url: 'redis://127.0.0.1:1', redisOptions: { lazyConnect: true, notAnIoredisOption: 1 } as never })).not.toThrow();
  });

  test('changes.leaseEnds is true on one master unless keyspaceEvents is off, never in quorum mode', () => {
    const lazy = { redisOptions: { lazyConnect: true } };
    expect(pool.redis({ url: 'redis://127.0.0.1:1', ...lazy }).changes.leaseEnds).toBe(true);
    expect(pool.redis({ url: 'redis://127.0.0.1:1', keyspaceEvents: 'configure', ...lazy }).changes.leaseEnds).toBe(true);
    expect(pool.redis({ url: 'redis://127.0.0.1:1', keyspaceEvents: 'off', ...lazy }).changes.leaseEnds).toBe(false);
    expect(pool.redis({ url: 'redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3', ...lazy }).changes.leaseEnds).toBe(false);
  });

  test('a comma-separated URL means quorum mode', () => {
    const b = pool.redis({ url: 'redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3', redisOptions: { lazyConnect: true } });
    expect(b.quorum).toBe(true);
    expect(b.changes).toMatchObject({ delivery: 'best-effort', leaseEnds: false });
    expect(b.leaderChanges).toMatchObject({ delivery: 'best-effort' });
    expect(b.tokenFloor).toMatchObject({ followsClock: true });
    expect(b.candidates).toBeDefined();
    expect(b.admin).toBeDefined();
  });

  test('the candidates and leaderChanges parts are there exactly with trackCandidates and publish', () => {
    const on = pool.redis({ url: 'redis://127.0.0.1:1', redisOptions: { lazyConnect: true } });
    expect(typeof on.candidates?.list).toBe('function');
    expect(typeof on.leaderChanges?.watch).toBe('function');
    const off = pool.redis({ url: 'redis://127.0.0.1:1', trackCandidates: false, publish: false, redisOptions: { lazyConnect: true } });
    expect(off.candidates).toBeUndefined();
    expect(off.leaderChanges).toBeUndefined();
  });

  test('names are validated in every method before any I/O', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    expect(await code(b.campaign({ election: 'bad name', candidateId: 'a', leaseMs: 1000 }))).toBe('INVALID_NAME');
    expect(await code(b.renew({ election: 'e', candidateId: 'has a space', token: 1, leaseMs: 1000 }))).toBe('INVALID_NAME');
    expect(await code(b.release({ election: '{x}', candidateId: 'a' }))).toBe('INVALID_NAME');
    expect(await code(b.getLeader(''))).toBe('INVALID_NAME');
    expect(await code(b.admin!.forceLeader('e', 'a', -1))).toBe('INVALID_OPTIONS');
    expect(await code(b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1.5 }))).toBe('INVALID_OPTIONS');
    expect(() => b.changes!.watch('bad/name', 'a', () => undefined)).toThrow(expect.objectContaining({ code: 'INVALID_NAME' }));
  });
});

describe('RedisBackend on one master', () => {
  test("a client of its own that ioredis gave up on ('end') is connected again by the next call", async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    const election = uniqueName();
    expect((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })).role).toBe('leader');
    // The state ioredis leaves a client in when its connector fails for good (as resolving the
    // master through Sentinel can, during a failover): 'end', no reconnection of its own.
    const client = (b as unknown as { nodes: Array<{ client: { status: string; disconnect(): void } }> }).nodes[0]!.client;
    client.disconnect();
    await waitFor(() => client.status === 'end', 5_000, 'the client to end');
    const again = await b.campaign({ election, candidateId: 'a', leaseMs: 5000 }).catch((err: unknown) => err);
    // The first call may find the connection still being made; the next one is served.
    const served = (again as { role?: string }).role === 'leader' ? again : await b.campaign({ election, candidateId: 'a', leaseMs: 5000 });
    expect(served).toMatchObject({ role: 'leader' });
    expect(client.status).toBe('ready');
  });

  test('acquire, join as follower, re-campaign keeps the term, renew, release', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    const election = uniqueName();
    const first = await b.campaign({ election, candidateId: 'a', leaseMs: 5000 });
    expect(first).toEqual({ role: 'leader', token: expect.any(Number), leaseMs: 5000 });
    const token = (first as { token: number }).token;

    const follower = await b.campaign({ election, candidateId: 'b', leaseMs: 5000 });
    expect(follower).toMatchObject({ role: 'follower', leaderId: 'a', token });
    const remaining = (follower as { leaseRemainingMs?: number }).leaseRemainingMs!;
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(5000);

    expect(await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })).toEqual({ role: 'leader', token, leaseMs: 5000 });
    expect(await b.renew({ election, candidateId: 'a', token, leaseMs: 5000 })).toEqual({ held: true, leaseMs: 5000 });
    expect(await b.getLeader(election)).toMatchObject({ candidateId: 'a', token });
    expect(await b.candidates!.list(election)).toEqual(['a', 'b']);

    await b.release({ election, candidateId: 'a', token });
    await b.release({ election, candidateId: 'a', token }); // idempotent
    expect(await b.getLeader(election)).toBeNull();
    expect(await b.candidates!.list(election)).toEqual(['b']);
    const next = await b.campaign({ election, candidateId: 'b', leaseMs: 5000 });
    expect(next.role).toBe('leader');
    expect((next as { token: number }).token).toBeGreaterThan(token);
  });

  test('a foreign id cannot renew or release; a stale token cannot renew', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    const election = uniqueName();
    const { token } = (await b.campaign({ election, candidateId: 'owner', leaseMs: 5000 })) as { token: number };
    expect(await b.renew({ election, candidateId: 'intruder', token, leaseMs: 5000 })).toEqual({ held: false, leaderId: 'owner' });
    expect(await b.renew({ election, candidateId: 'owner', token: token + 1, leaseMs: 5000 })).toEqual({ held: false, leaderId: 'owner' });
    await b.release({ election, candidateId: 'intruder', token });
    await b.release({ election, candidateId: 'intruder' });
    await b.release({ election, candidateId: 'owner', token: token + 1 }); // another term: untouched
    expect(await b.getLeader(election)).toMatchObject({ candidateId: 'owner', token });
    // renew never creates a lease
    await b.release({ election, candidateId: 'owner', token });
    expect(await b.renew({ election, candidateId: 'owner', token, leaseMs: 5000 })).toEqual({ held: false, leaderId: null });
    expect(await b.getLeader(election)).toBeNull();
  });

  test('tokens keep increasing across clear and force', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix(), tokenClockFloor: false });
    const election = uniqueName();
    const t1 = ((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number }).token;
    expect(t1).toBe(1);
    await b.admin!.clearLeader(election);
    expect(await b.getLeader(election)).toBeNull();
    // The revoked lease keeps everyone out until it ends (a tombstone held by nobody).
    expect(await b.renew({ election, candidateId: 'a', token: t1, leaseMs: 5000 })).toEqual({ held: false, leaderId: null });
    const waiting = await b.campaign({ election, candidateId: 'b', leaseMs: 1000 });
    expect(waiting).toMatchObject({ role: 'follower', leaderId: null, token: null });
    expect((waiting as { leaseRemainingMs: number }).leaseRemainingMs).toBeGreaterThan(4000);
    await waitFor(async () => (await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })).role === 'leader', 10_000, 'the tombstone to end');
    const t2 = ((await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })) as { token: number }).token;
    const forcedAt = Date.now();
    const forced = await b.admin!.forceLeader(election, 'c', 5000);
    // b's lease ran out before c's term started.
    expect(Date.now() - forcedAt).toBeGreaterThanOrEqual(500);
    expect(forced.token).toBeGreaterThan(t2);
    expect(t2).toBeGreaterThan(t1);
    expect(await b.renew({ election, candidateId: 'b', token: t2, leaseMs: 5000 })).toEqual({ held: false, leaderId: 'c' });
    expect(await b.renew({ election, candidateId: 'c', token: forced.token, leaseMs: 5000 })).toEqual({ held: true, leaseMs: 5000 });
  });

  test('raiseTokenFloor: the next term gets a greater token; the current term keeps its own', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix(), tokenClockFloor: false });
    const election = uniqueName();
    const { token } = (await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number };
    await b.tokenFloor!.raise(election, 1000);
    await b.tokenFloor!.raise(election, 10); // never lowers it
    expect(await b.getLeader(election)).toMatchObject({ candidateId: 'a', token });
    await b.release({ election, candidateId: 'a', token });
    expect(await b.campaign({ election, candidateId: 'b', leaseMs: 5000 })).toMatchObject({ role: 'leader', token: 1001 });
  });

  test('with the clock floor, tokens are at least the server time in ms', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    const election = uniqueName();
    const before = Date.now() - 60_000; // generous: server and client clocks are the same machine's here
    const t1 = ((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number }).token;
    expect(t1).toBeGreaterThan(before);
    await b.release({ election, candidateId: 'a', token: t1 });
    const t2 = ((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number }).token;
    expect(t2).toBeGreaterThan(t1);
    expect(Number.isSafeInteger(t2)).toBe(true);
  });

  test('a lease expires on the server when nobody renews it', async () => {
    const b = pool.redis({ url: SHARED_URL, keyPrefix: uniquePrefix() });
    const election = uniqueName();
    await b.campaign({ election, candidateId: 'a', leaseMs: 1000 });
    await waitFor(async () => (await b.getLeader(election)) === null, 5000, 'the lease to expire');
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: 1000 })).role).toBe('leader');
  });

  test('release, force and clear wake watchers; unwatch stops them', async () => {
    const prefix = uniquePrefix();
    const a = pool.redis({ url: SHARED_URL, keyPrefix: prefix });
    const b = pool.redis({ url: SHARED_URL, keyPrefix: prefix });
    const election = uniqueName();
    let hints = 0;
    const unwatch = b.changes!.watch(election, 'b', () => hints++);
    await waitFor(() => (b.subscriberClients()[0] as Redis | undefined)?.status === 'ready', 5000, 'the subscriber');
    await new Promise((r) => setTimeout(r, 100)); // SUBSCRIBE is sent right after ready
    const { token } = (await a.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number };
    await a.release({ election, candidateId: 'a', token });
    await waitFor(() => hints >= 1, 5000, 'a hint after release');
    await a.admin!.forceLeader(election, 'x', 1000);
    await waitFor(() => hints >= 2, 5000, 'a hint after force');
    await a.admin!.clearLeader(election);
    await waitFor(() => hints >= 3, 5000, 'a hint after clear');
    unwatch();
    unwatch();
    await new Promise((r) => setTimeout(r, 100));
    const seen = hints;
    await a.admin!.forceLeader(election, 'y', 5000);
    await new Promise((r) => setTimeout(r, 300));
    expect(hints).toBe(seen);
  });

  test('isWatching follows the confirmed subscription and the subscriber connection; many campaigns add no listeners', async () => {
    const prefix = uniquePrefix();
    const b = pool.redis({ url: SHARED_URL, keyPrefix: prefix });
    const names = Array.from({ length: 30 }, () => uniqueName());
    expect(b.changes!.isWatching!(names[0]!, 'b')).toBe(false);
    const unwatch = names.map((election) => b.changes!.watch(election, 'b', () => undefined));
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // Campaigns made before the SUBSCRIBEs are confirmed all wait on them: no listener per call.
      await Promise.all(names.map((election) => b.campaign({ election, candidateId: 'b', leaseMs: 5000 })));
      await waitFor(() => names.every((election) => b.changes!.isWatching!(election, 'b')), 5000, 'every subscription confirmed');
      const sub = b.subscriberClients()[0] as Redis;
      expect(sub.listenerCount('close')).toBeLessThan(5);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      // The connection drops: nothing is confirmed until ioredis reconnects and resubscribes.
      const closed = new Promise((r) => sub.once('close', r));
      sub.stream.destroy();
      await closed;
      expect(b.changes!.isWatching!(names[0]!, 'b')).toBe(false);
      await waitFor(() => names.every((election) => b.changes!.isWatching!(election, 'b')), 10_000, 'confirmed again after the reconnect');
      unwatch[0]!();
      expect(b.changes!.isWatching!(names[0]!, 'b')).toBe(false);
      expect(b.changes!.isWatching!(names[1]!, 'b')).toBe(true);
      await b.close();
      expect(b.changes!.isWatching!(names[1]!, 'b')).toBe(false);
    } finally {
      process.off('warning', onWarning);
      unwatch.forEach((u) => u());
    }
  });

  test('renewals of many elections in one turn share one round trip', async () => {
    const client = new Redis(SHARED_URL);
    try {
      const b = pool.redis({ client, keyPrefix: uniquePrefix() });
      const names = Array.from({ length: 50 }, () => uniqueName());
      const tokens = await Promise.all(
        names.map(async (election) => ((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number }).token),
      );
      let pipelines = 0;
      const original = client.pipeline.bind(client);
      client.pipeline = ((...args: Parameters<typeof original>) => {
        pipelines++;
        return original(...args);
      }) as typeof client.pipeline;
      const results = await Promise.all(names.map((election, i) => b.renew({ election, candidateId: 'a', token: tokens[i]!, leaseMs: 5000 })));
      expect(results.every((r) => r.held)).toBe(true);
      expect(pipelines).toBe(1);
      await Promise.all(names.map((election, i) => b.release({ election, candidateId: 'a', token: tokens[i]! })));
    } finally {
      await pool.closeAll();
      client.disconnect();
    }
  });

  test('renewals of one turn are one script command, each judged by its own lease: held, lost or failed', async () => {
    const client = new Redis(SHARED_URL);
    try {
      const keyPrefix = uniquePrefix();
      const b = pool.redis({ client, keyPrefix });
      const names = Array.from({ length: 6 }, () => uniqueName());
      const tokens = await Promise.all(
        names.map(async (election) => ((await b.campaign({ election, candidateId: 'a', leaseMs: 5000 })) as { token: number }).token),
      );
      // The third lease is no hash any more: its renewal alone fails.
      await client.set(`${keyPrefix}{${names[2]}}:lease`, 'not a lease');
      let commands = 0;
      const original = client.pipeline.bind(client);
      client.pipeline = ((...args: Parameters<typeof original>) => {
        const pipeline = original(...args);
        const evalsha = pipeline.evalsha.bind(pipeline);
        pipeline.evalsha = ((...a: Parameters<typeof evalsha>) => {
          commands++;
          return evalsha(...a);
        }) as typeof pipeline.evalsha;
        return pipeline;
      }) as typeof client.pipeline;
      // The second renewal names a stale term: lost, the holder named.
      const outcomes = await Promise.allSettled(
        names.map((election, i) => b.renew({ election, candidateId: 'a', token: i === 1 ? tokens[i]! - 1 : tokens[i]!, leaseMs: 5000 })),
      );
      expect(commands).toBe(1);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.held : 'failed'))).toEqual([true, false, 'failed', true, true, true]);
      expect(outcomes[1]).toMatchObject({ value: { held: false, leaderId: 'a' } });
      expect(outcomes[2]).toMatchObject({ reason: { code: 'BACKEND_ERROR', message: expect.stringContaining('WRONGTYPE') } });
      // Each held lease was extended on the server.
      for (const i of [0, 3, 4, 5]) expect(await client.pttl(`${keyPrefix}{${names[i]}}:lease`)).toBeGreaterThan(4000);
    } finally {
      await pool.closeAll();
      client.disconnect();
    }
  });

  test('renewals sent together after the server forgot its scripts are sent again with their source', async () => {
    const server = await RedisServer.start();
    const admin = new Redis(server.url);
    try {
      await pastRestartFence([server.url], 1500);
      const b = pool.redis({ url: server.url, keyPrefix: uniquePrefix() });
      const names = Array.from({ length: 4 }, () => uniqueName());
      const tokens = await Promise.all(
        names.map(async (election) => ((await b.campaign({ election, candidateId: 'a', leaseMs: 1500 })) as { token: number }).token),
      );
      const renewAll = () => Promise.all(names.map((election, i) => b.renew({ election, candidateId: 'a', token: tokens[i]!, leaseMs: 1500 })));
      expect((await renewAll()).every((r) => r.held)).toBe(true);
      await admin.script('FLUSH');
      expect((await renewAll()).every((r) => r.held)).toBe(true);
    } finally {
      admin.disconnect();
      await pool.closeAll();
      await server.stop();
    }
  }, 30_000);

  test('a client passed in is not closed; close() is idempotent and later calls are CLOSED', async () => {
    const client = new Redis(SHARED_URL);
    try {
      const b = new RedisBackend({ client, keyPrefix: uniquePrefix() });
      const election = uniqueName();
      const unwatch = b.changes!.watch(election, 'a', () => undefined);
      await b.campaign({ election, candidateId: 'a', leaseMs: 1000 });
      unwatch();
      await b.close();
      await b.close();
      expect(await client.ping()).toBe('PONG');
      expect(await code(b.getLeader(election))).toBe('CLOSED');
    } finally {
      client.disconnect();
    }
  });

  test('a dead server fails calls fast with BACKEND_UNAVAILABLE', async () => {
    const b = pool.redis({ url: 'redis://127.0.0.1:1', keyPrefix: uniquePrefix() });
    const started = Date.now();
    expect(await code(b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1000 }))).toBe('BACKEND_UNAVAILABLE');
    expect(await code(b.getLeader('e'))).toBe('BACKEND_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(2500); // bounded by commandTimeoutMs, not by a lease
  });
});
