import { MemoryBackend, MemoryStore } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';
import { describeBackendConformance } from '@conclave/test-harness';

// The dual phase over two in-memory "servers": the composition itself must pass the suite.
const fromStore = new MemoryStore();
const toStore = new MemoryStore();
const dual = () =>
  new MigratingBackend({
    from: new MemoryBackend({ store: fromStore }),
    to: new MemoryBackend({ store: toStore }),
    phase: 'dual',
  });

describeBackendConformance('migrate (dual, memory → memory)', {
  // In dual: from's queue and observer feed, both sides' push, no token floor (see pair-parts.ts).
  profile: { candidates: true, changes: 'best-effort', leaseEnds: false, leaderChanges: 'best-effort', tokenFloor: false, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true } },
  create: dual,
});
