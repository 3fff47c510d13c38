import { ConclaveError } from '@conclave/core';
import { assertOptionKeys, describeValue, optionKeys, type ElectionBackend } from '@conclave/core/spi';

/**
 * Where a candidate stands in a migration from backend `from` to backend `to`:
 * - `from-only`: campaigns on `from` alone, exactly like a node that has never heard of the
 *   migration (tokens are `from`'s).
 * - `dual`: leads only while it holds both leases, taken in the order from → to and given back
 *   to → from. Safe beside `from-only` nodes (everyone who leads holds `from`) and beside
 *   `to-only` nodes (everyone who leads holds `to`).
 * - `to-only`: campaigns on `to` alone; the migration is over.
 *
 * A rolling deployment moves one process at a time: from-only → dual, then dual → to-only.
 * `from-only` and `to-only` must never run at the same time: they share no lease.
 */
export type MigrationPhase = 'from-only' | 'dual' | 'to-only';

/** The phases, in the order a migration goes through them. */
export const MIGRATION_PHASES: readonly MigrationPhase[] = ['from-only', 'dual', 'to-only'];

/** Options of `new MigratingBackend(options)`: the two backends and this process's phase. */
export interface MigratingBackendOptions {
  /** The backend the election is moving away from (e.g. ZooKeeper). */
  from: ElectionBackend;
  /** The backend the election is moving to (e.g. MySQL). */
  to: ElectionBackend;
  /** This process's phase: `from-only`, `dual` or `to-only` (see `MigrationPhase`). */
  phase: MigrationPhase;
  /**
   * Close `from` and `to` in `close()`. Default true: the migrating backend owns the two
   * backends it was given (which in turn never close clients you passed to them).
   */
  closeBackends?: boolean;
}

const MIGRATING_OPTION_KEYS = optionKeys<MigratingBackendOptions>({ from: true, to: true, phase: true, closeBackends: true });

const KIND = 'migrate';

/** Validates the options before any I/O. Throws `INVALID_OPTIONS`. */
export function resolveMigratingOptions(options: unknown): Required<MigratingBackendOptions> {
  assertOptionKeys(options, MIGRATING_OPTION_KEYS, 'MigratingBackend options', KIND);
  const o = options as Partial<MigratingBackendOptions>;
  for (const side of ['from', 'to'] as const) {
    const backend = o[side];
    if (typeof backend !== 'object' || backend === null || typeof backend.campaign !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', `${side} must be an ElectionBackend, got ${describeValue(backend)}`, {
        backend: KIND,
      });
    }
  }
  if (o.from === o.to) {
    throw new ConclaveError('INVALID_OPTIONS', 'from and to must be two different backends', { backend: KIND });
  }
  if (!MIGRATION_PHASES.includes(o.phase as MigrationPhase)) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `phase must be one of ${MIGRATION_PHASES.join(', ')}, got ${describeValue(o.phase)}`,
      { backend: KIND },
    );
  }
  if (o.phase === 'dual' && o.to!.tokenFloor?.followsClock === true && o.from!.tokenFloor === undefined) {
    // Dual tokens would follow `to`'s clock (~1.7e12) while old nodes on `from` keep `from`'s
    // small tokens: the next old leader would get a lower token than the dual one before it.
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `in dual, to (${o.to!.kind}) must not take tokens from its clock while from (${o.from!.kind}) cannot raise its token floor: ` +
        'turn the clock floor off on to (Redis: tokenClockFloor: false)',
      { backend: KIND },
    );
  }
  if (o.closeBackends !== undefined && typeof o.closeBackends !== 'boolean') {
    throw new ConclaveError('INVALID_OPTIONS', `closeBackends must be a boolean, got ${describeValue(o.closeBackends)}`, {
      backend: KIND,
    });
  }
  return { from: o.from!, to: o.to!, phase: o.phase as MigrationPhase, closeBackends: o.closeBackends ?? true };
}
