import { RedisBackend } from '@conclave/redis';
import { describeBackendConformance } from '@conclave/test-harness';
import { RedisServer, startRedisServers } from '@conclave/redis/testing';
import { pastRestartFence, uniquePrefix } from './helpers';

// A quorum looks at each lease end: no lease ends pushed.
const profile = { candidates: true, changes: 'best-effort', leaseEnds: false, leaderChanges: 'best-effort', tokenFloor: true, tokensFollowClock: true, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: false } } as const;

// Three private masters: a Redlock quorum.
describe('quorum of three masters', () => {
  let servers: RedisServer[] = [];
  beforeAll(async () => {
    servers = await startRedisServers(3);
    await pastRestartFence(servers.map((s) => s.url), 1500);
  }, 30_000);
  afterAll(() => Promise.all(servers.map((s) => s.stop())));
  const keyPrefix = uniquePrefix();
  describeBackendConformance('redis quorum (3 of 3 up)', {
    profile,
    create: () => new RedisBackend({ urls: servers.map((s) => s.url), keyPrefix }),
  });
});

// The same with one master down from the start: two of three are still a majority.
describe('quorum of three masters, one stopped', () => {
  let servers: RedisServer[] = [];
  beforeAll(async () => {
    servers = await startRedisServers(3);
    await servers[2]!.stop();
    await pastRestartFence(servers.slice(0, 2).map((s) => s.url), 1500);
  }, 30_000);
  afterAll(() => Promise.all(servers.map((s) => s.stop())));
  const keyPrefix = uniquePrefix();
  describeBackendConformance('redis quorum (2 of 3 up)', {
    profile,
    create: () => new RedisBackend({ urls: servers.map((s) => s.url), keyPrefix }),
  });
});
