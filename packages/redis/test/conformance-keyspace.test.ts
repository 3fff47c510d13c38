import { RedisBackend } from '@conclave/redis';
import { describeBackendConformance } from '@conclave/test-harness';
import { RedisServer } from '@conclave/redis/testing';
import { pastRestartFence, uniquePrefix } from './helpers';

// The whole suite again with quiet followers: a private master that sends the keyspace events they
// need (the shared server's configuration is not ours to change), so every scenario runs with
// renewals pushed to followers.
describe('one master with keyspace events (notify-keyspace-events Kgx)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start({ args: ['--notify-keyspace-events', 'Kgx'] });
    await pastRestartFence([server.url], 1500);
  }, 30_000);
  afterAll(() => server.stop());
  const keyPrefix = uniquePrefix();
  describeBackendConformance('redis with keyspace events', {
    profile: { candidates: true, changes: 'best-effort', leaseEnds: true, leaderChanges: 'best-effort', tokenFloor: true, tokensFollowClock: true, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: false } },
    create: () => new RedisBackend({ url: server.url, keyPrefix }),
  });
});
