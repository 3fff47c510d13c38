import { MemoryBackend, MemoryStore } from '@conclave/core';
import { describeBackendConformance } from '@conclave/test-harness';

// One MemoryStore plays the server; every candidate connects with its own MemoryBackend.
const store = new MemoryStore();
describeBackendConformance('memory', {
  profile: { candidates: true, changes: 'best-effort', leaseEnds: false, leaderChanges: 'best-effort', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true } },
  create: () => new MemoryBackend({ store }),
});
