import { RedisBackend } from '@conclave/redis';
import { describeBackendConformance } from '@conclave/test-harness';
import { SHARED_URL, uniquePrefix } from './helpers';

// The machine's shared redis-server; a random key prefix per run, never FLUSHALL.
const keyPrefix = uniquePrefix();
describeBackendConformance('redis', {
  capabilities: { listCandidates: true, electionExists: true, push: 'best-effort', leaderPush: 'best-effort', tokenFloor: true, tokenClock: true, leaseEndPush: true, leaderMetadata: RedisBackend.leaderMetadata },
  create: () => new RedisBackend({ url: SHARED_URL, keyPrefix }),
});
