import type { BackendKit } from '@conclave/test-harness/tools';
import { startRedisBenchServer } from './redis-bench-server';
import { startRedisFaultEnvironment } from './redis-fault-environment';

/** How the harness and the bench start private Redis servers (see `BackendKit`). */
export const redisKit: BackendKit = {
  kind: 'redis',
  providerModules: ['@conclave/redis'],
  topologies: ['single', 'no-persistence', 'quorum', 'duplicate-id', 'sentinel'],
  startFaultEnvironment: startRedisFaultEnvironment,
  startBenchServer: () => startRedisBenchServer(),
  // Followers wait on pub/sub, and keyspace events push each renewal's new lease end (the bench's
  // server sends them): none of their traffic is periodic (the margin covers one re-read in a
  // window, e.g. the campaign that keeps a quiet follower listed, every 30 s).
  followerAllowance: () => ({ maxPerSec: 0.05, target: 'no polling' }),
};
