import { MemoryBackend, MemoryStore } from '@conclave/core';
import type { ElectionBackend } from '@conclave/core/spi';
import { MIGRATION_PHASES, MigratingBackend, type MigrationPhase } from '@conclave/migrate';

/** A memory backend without a candidate queue, push or observers. */
function bare(): ElectionBackend {
  const backend = new MemoryBackend({ store: new MemoryStore() });
  Object.defineProperties(backend, { candidates: { value: undefined }, changes: { value: undefined }, leaderChanges: { value: undefined } });
  return backend;
}
const full = () => new MemoryBackend({ store: new MemoryStore() });
const has = (backend: ElectionBackend) => ({
  admin: backend.admin !== undefined,
  candidates: backend.candidates !== undefined,
  changes: backend.changes?.delivery ?? 'none',
  leaderChanges: backend.leaderChanges !== undefined,
  tokenFloor: backend.tokenFloor !== undefined,
});

/** What the pair has, by the rules of pair-parts.ts. */
function expected(phase: MigrationPhase, from: ElectionBackend, to: ElectionBackend) {
  const side = phase === 'to-only' ? to : from;
  const pushes = phase === 'dual' ? [from, to].some((b) => b.changes) : side.changes !== undefined;
  return {
    admin: true,
    candidates: side.candidates !== undefined,
    changes: pushes ? 'best-effort' : 'none',
    // Observers and getLeader follow `from` until to-only.
    leaderChanges: side.leaderChanges !== undefined,
    // A dual term's token is to's, raised to follow from's: no floor of its own.
    tokenFloor: phase !== 'dual',
  };
}

test('the migrating backend has a part exactly where its sides allow it, in every phase', () => {
  for (const phase of MIGRATION_PHASES) {
    for (const [from, to] of [
      [bare(), full()],
      [full(), bare()],
      [full(), full()],
    ] as const) {
      const backend = new MigratingBackend({ from, to, phase, closeBackends: false });
      expect({ phase, ...has(backend) }).toEqual({ phase, ...expected(phase, from, to) });
    }
  }
});

test('dual: push is reliable only when both sides push reliably', () => {
  const reliable = () => {
    const backend = full();
    Object.defineProperty(backend, 'changes', { value: { ...backend.changes, delivery: 'reliable' } });
    return backend;
  };
  expect(new MigratingBackend({ from: reliable(), to: reliable(), phase: 'dual' }).changes?.delivery).toBe('reliable');
  expect(new MigratingBackend({ from: reliable(), to: full(), phase: 'dual' }).changes?.delivery).toBe('best-effort');
  expect(new MigratingBackend({ from: reliable(), to: bare(), phase: 'dual' }).changes?.delivery).toBe('best-effort');
});
