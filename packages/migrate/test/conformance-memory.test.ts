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

describeBackendConformance('migrate (dual, memory → memory)', { capabilities: dual().capabilities, create: dual });
