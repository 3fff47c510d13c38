import { MemoryBackend, MemoryStore } from '@conclave/core';
import { describeBackendConformance } from '@conclave/test-harness';

// One MemoryStore plays the server; every candidate connects with its own MemoryBackend.
const store = new MemoryStore();
describeBackendConformance('memory', {
  capabilities: new MemoryBackend().capabilities,
  create: () => new MemoryBackend({ store }),
});
