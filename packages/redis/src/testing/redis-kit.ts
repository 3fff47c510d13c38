import type { BackendKit } from '@conclave/test-harness/tools';
import { startRedisBenchServer } from './redis-bench-server';
import { startRedisFaultEnvironment } from './redis-fault-environment';

/** How the harness and the bench start private Redis servers (see `BackendKit`). */
export const redisKit: BackendKit = {
  kind: 'redis',
  providerModules: ['@conclave/redis'],
  topologies: ['single', 'no-persistence', 'quorum', 'duplicate-id'],
  startFaultEnvironment: startRedisFaultEnvironment,
  startBenchServer: () => startRedisBenchServer(),
  // Followers wait on pub/sub and the lease's end: none of their traffic is periodic (the margin
  // covers one re-read in a window).
  followerAllowance: () => ({ maxPerSec: 0.05, target: 'no polling' }),
};
