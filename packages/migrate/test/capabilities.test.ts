import { MemoryBackend, MemoryStore } from '@conclave/core';
import { assertCapabilitiesConsistent, type BackendCapabilities, type ElectionBackend } from '@conclave/core/spi';
import { MIGRATION_PHASES, MigratingBackend } from '@conclave/migrate';

/** A memory backend declaring `capabilities`, with the methods named in `hidden` taken away. */
function memoryWith(capabilities: Partial<BackendCapabilities>, hidden: string[] = []): ElectionBackend {
  const backend = new MemoryBackend({ store: new MemoryStore() });
  Object.defineProperty(backend, 'capabilities', { value: { ...backend.capabilities, ...capabilities } });
  for (const method of hidden) Object.defineProperty(backend, method, { value: undefined });
  return backend;
}

test('a side whose methods disagree with its declaration is refused with INVALID_OPTIONS, in every phase', () => {
  for (const phase of MIGRATION_PHASES) {
    const broken = memoryWith({}, ['raiseTokenFloor']);
    expect(() => new MigratingBackend({ from: broken, to: memoryWith({}), phase })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('has no raiseTokenFloor') }),
    );
    expect(() => new MigratingBackend({ from: memoryWith({}), to: memoryWith({ tokenFloor: false }), phase })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('has raiseTokenFloor() but declares') }),
    );
  }
});

test('what the migrating backend declares agrees with its own methods, in every phase', () => {
  // A side without push, list or observers beside one with all of them, either way round.
  const bare = () => memoryWith({ listCandidates: false, push: 'none', leaderPush: 'none' }, ['listCandidates', 'watch', 'watchLeader']);
  for (const phase of MIGRATION_PHASES) {
    for (const [from, to] of [
      [bare(), memoryWith({})],
      [memoryWith({}), bare()],
      [memoryWith({}), memoryWith({})],
    ]) {
      expect(() => assertCapabilitiesConsistent(new MigratingBackend({ from: from!, to: to!, phase, closeBackends: false }))).not.toThrow();
    }
  }
});
