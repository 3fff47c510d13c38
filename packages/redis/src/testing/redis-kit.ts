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
};
