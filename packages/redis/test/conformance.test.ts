import { RedisBackend } from '@conclave/redis';
import { describeBackendConformance } from '@conclave/test-harness';
import { SHARED_URL, uniquePrefix } from './helpers';

// The machine's shared redis-server; a random key prefix per run, never FLUSHALL.
const keyPrefix = uniquePrefix();
describeBackendConformance('redis', {
  profile: { candidates: true, changes: 'best-effort', leaseEnds: true, leaderChanges: 'best-effort', tokenFloor: true, tokensFollowClock: true, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: false } },
  create: () => new RedisBackend({ url: SHARED_URL, keyPrefix }),
});
