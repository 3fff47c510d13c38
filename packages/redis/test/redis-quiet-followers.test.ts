/**
 * Quiet followers: on a master that sends keyspace events, a follower learns of every renewal
 * from the lease key's keyspace channel and sends nothing while they come; without them (CONFIG
 * refused, the setting off, the subscription dead) it looks at each lease end as before. Each
 * test runs on a private redis-server started with the configuration it is about.
 */
import { performance } from 'node:perf_hooks';
import { Elector } from '@conclave/core';
import { forwardBackend, type ElectionBackend } from '@conclave/core/spi';
import { RedisBackend, electionKeys, type RedisBackendOptions } from '@conclave/redis';
import { RedisServer } from '@conclave/redis/testing';
import Redis from 'ioredis';
import { BackendPool, freezable, pastRestartFence, uniqueName, uniquePrefix, waitFor } from './helpers';

const LEASE_MS = 1500; // renewMs 500, retryMs 300
/** Time given to a new follower to settle (its first answer, the first renewals pushed) before counting. */
const SETTLE_MS = 3000;
const pool = new BackendPool();
const electors: Elector[] = [];
const servers: RedisServer[] = [];
const admins: Redis[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await pool.closeAll();
});
afterAll(async () => {
  await Promise.all(admins.splice(0).map((c) => c.quit().catch(() => undefined)));
  await Promise.all(servers.splice(0).map((s) => s.kill()));
});

async function privateServer(args: string[]): Promise<{ server: RedisServer; admin: Redis }> {
  const server = await RedisServer.start({ args });
  servers.push(server);
  await pastRestartFence([server.url], LEASE_MS);
  // The test's own connection: CONFIG (when the server has it) and CLIENT LIST.
  const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  admins.push(admin);
  return { server, admin };
}

/** A backend whose campaigns are counted (the calls a follower makes), and the backend itself. */
function counted(options: RedisBackendOptions): { backend: ElectionBackend; redis: RedisBackend; campaigns: () => number } {
  const redis = pool.redis(options);
  let campaigns = 0;
  const backend = forwardBackend(redis, {
    all: (method, _args, invoke) => {
      if (method === 'campaign') campaigns++;
      return invoke();
    },
  });
  return { backend, redis, campaigns: () => campaigns };
}

function elector(backend: ElectionBackend, election: string, candidateId: string): Elector {
  const e = new Elector({ backend, election, candidateId, leaseMs: LEASE_MS, logger: null });
  electors.push(e);
  return e;
}

/** Seconds since the named client's command connection (not its subscriber) last sent anything, as the server counts. */
async function idleSeconds(admin: Redis, name: string): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  const line = list.split('\n').find((l) => l.includes(` name=${name} `) && / sub=0 /.test(l) && / psub=0 /.test(l));
  if (!line) throw new Error(`no command connection named ${name} in CLIENT LIST:\n${list}`);
  return Number(/ idle=(\d+) /.exec(line)![1]);
}

/** Starts a leader, then a follower that has had its first answer and whose push is live. */
async function leaderAndFollower(url: string, follower: RedisBackendOptions = {}) {
  const keyPrefix = uniquePrefix();
  const election = uniqueName();
  const leader = counted({ url, keyPrefix });
  const frozen = freezable(leader.backend);
  const a = elector(frozen.backend, election, 'a');
  await a.start();
  expect(a.isLeader()).toBe(true);
  const f = counted({ url, keyPrefix, redisOptions: { connectionName: 'quiet-follower' }, ...follower });
  const b = elector(f.backend, election, 'b');
  await b.start();
  expect(b.isLeader()).toBe(false);
  await waitFor(() => f.redis.changes!.isWatching!(election, 'x'), 3000, "the follower's subscription to be confirmed");
  return { keyPrefix, election, a, b, leader, follower: f, freeze: frozen.freeze };
}

describe('on a master that sends keyspace events (notify-keyspace-events Kgx)', () => {
  let url = '';
  let admin: Redis;
  beforeAll(async () => {
    const started = await privateServer(['--notify-keyspace-events', 'Kgx']);
    url = started.server.url;
    admin = started.admin;
  }, 30_000);

  test('an idle follower sends no command while the leader renews, and stays listed past three leases', async () => {
    const { election, a, follower, leader } = await leaderAndFollower(url);
    expect(follower.redis.keyspaceEventsStatus()).toBe('on');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const campaigns0 = follower.campaigns();
    const renewals0 = Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))![1]);
    await new Promise((r) => setTimeout(r, 5000));
    const renewals1 = Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))![1]);
    expect(follower.campaigns() - campaigns0).toBe(0);
    // The server saw nothing from the follower's command connection for the whole window…
    expect(await idleSeconds(admin, 'quiet-follower')).toBeGreaterThanOrEqual(4);
    // …while the leader renewed every 500 ms, and still leads.
    expect(renewals1 - renewals0).toBeGreaterThanOrEqual(8);
    expect(a.isLeader()).toBe(true);
    // More than three leases (4.5 s) have passed since the follower's campaign: still a candidate.
    expect(await leader.redis.candidates!.list(election)).toEqual(['a', 'b']);
  }, 20_000);

  test('a dead subscription falls back to polling', async () => {
    const { election, follower } = await leaderAndFollower(url);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const quiet0 = follower.campaigns();
    await new Promise((r) => setTimeout(r, 1000));
    expect(follower.campaigns() - quiet0).toBe(0);
    // The subscriber connection goes away for good (no reconnect after a manual disconnect).
    (follower.redis.subscriberClients()[0] as Redis).disconnect();
    await waitFor(() => !follower.redis.changes!.isWatching!(election, 'x'), 1000, 'the subscription to be seen down');
    const campaigns0 = follower.campaigns();
    await new Promise((r) => setTimeout(r, 3000));
    // Within a lease it looks again, then polls at retryMs (300 ms) while not watching.
    expect(follower.campaigns() - campaigns0).toBeGreaterThanOrEqual(4);
  }, 20_000);
});

describe('on a master that sends keyspace events but not expiries (notify-keyspace-events Kg)', () => {
  // No `expired` event to fall back on: the take-over can only come from the follower's own timer.
  let url = '';
  let admin: Redis;
  beforeAll(async () => {
    const started = await privateServer(['--notify-keyspace-events', 'Kg']);
    url = started.server.url;
    admin = started.admin;
  }, 30_000);

  test('a crash take-over still happens right at the lease end, timed by the last renewal pushed', async () => {
    const { keyPrefix, election, a, b, follower, freeze } = await leaderAndFollower(url);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const campaigns0 = follower.campaigns();
    let electedAt = 0;
    b.elected$.subscribe(() => (electedAt = performance.now()));
    const tokenA = a.token!;
    // The leader stops renewing without releasing (a crash, as the server sees it).
    freeze();
    await new Promise((r) => setTimeout(r, 50)); // a renewal already sent lands first
    const before = performance.now();
    const pttl = await admin.pttl(electionKeys(keyPrefix, election).lease);
    const after = performance.now();
    expect(pttl).toBeGreaterThan(0);
    await waitFor(() => b.isLeader(), 2 * LEASE_MS, 'the follower to take over');
    expect(b.token!).toBeGreaterThan(tokenA);
    // Never before the lease ended on the server; after it, by less than a follower poll (300 ms)
    // or a renew interval (500 ms), the timings it would have if it were not timed by the last
    // renewal pushed. (How soon after the end is the bench's to measure, not a test's.)
    expect(electedAt).toBeGreaterThanOrEqual(before + pttl - 2);
    expect(electedAt - (after + pttl)).toBeLessThan(250);
    // One campaign, timed by the last renewal pushed.
    expect(follower.campaigns() - campaigns0).toBe(1);
  }, 20_000);

});

describe('on a master that refuses CONFIG (as managed Redis does)', () => {
  let url = '';
  beforeAll(async () => {
    // Events are even on, but the backend cannot tell: it must not count on them.
    url = (await privateServer(['--notify-keyspace-events', 'Kgx', '--rename-command', 'CONFIG', '""'])).server.url;
  }, 30_000);

  test("CONFIG refused falls back to looking at each lease end, and a crash take-over still happens", async () => {
    const { a, b, follower, freeze } = await leaderAndFollower(url, { keyspaceEvents: 'configure' });
    await waitFor(() => follower.redis.keyspaceEventsStatus() !== 'unknown', 2000, 'the keyspace check');
    expect(follower.redis.keyspaceEventsStatus()).toBe('refused');
    const campaigns0 = follower.campaigns();
    await new Promise((r) => setTimeout(r, 3000));
    // A look at each lease end: the leader renews every 500 ms, so about every 1.0–1.5 s.
    expect(follower.campaigns() - campaigns0).toBeGreaterThanOrEqual(2);
    const tokenA = a.token!;
    freeze();
    await waitFor(() => b.isLeader(), 2 * LEASE_MS, 'the follower to take over');
    expect(b.token!).toBeGreaterThan(tokenA);
  }, 20_000);
});

describe('on a master without keyspace events (the default configuration)', () => {
  let url = '';
  let admin: Redis;
  beforeAll(async () => {
    const started = await privateServer([]);
    url = started.server.url;
    admin = started.admin;
  }, 30_000);

  test("'auto' leaves the server's configuration alone and falls back to looking at each lease end", async () => {
    const { follower } = await leaderAndFollower(url);
    await waitFor(() => follower.redis.keyspaceEventsStatus() !== 'unknown', 2000, 'the keyspace check');
    expect(follower.redis.keyspaceEventsStatus()).toBe('off');
    expect(await admin.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', '']);
    const campaigns0 = follower.campaigns();
    await new Promise((r) => setTimeout(r, 3000));
    expect(follower.campaigns() - campaigns0).toBeGreaterThanOrEqual(2);
  }, 20_000);

  test("'configure' turns the events on, and the follower goes quiet", async () => {
    const { follower } = await leaderAndFollower(url, { keyspaceEvents: 'configure' });
    await waitFor(() => follower.redis.keyspaceEventsStatus() !== 'unknown', 2000, 'the keyspace check');
    expect(follower.redis.keyspaceEventsStatus()).toBe('on');
    const [, flags] = (await admin.config('GET', 'notify-keyspace-events')) as [string, string];
    expect([...'Kgx'].every((f) => flags.includes(f))).toBe(true);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const campaigns0 = follower.campaigns();
    await new Promise((r) => setTimeout(r, 3000));
    expect(follower.campaigns() - campaigns0).toBe(0);
  }, 20_000);
});
