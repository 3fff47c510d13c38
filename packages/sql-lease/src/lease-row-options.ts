import { ConclaveError, DEFAULT_LEASE_MS } from '@conclave/core';
import { assertOptionKeys, assertPositiveInteger, describeValue } from '@conclave/core/spi';

/** The options every lease-row backend takes whichever way it connects, beside its table. Every duration is in ms. */
export interface SqlLeaseTimingOptions {
  /** Lease given by `forceLeader` when none is passed, ms. Default 10 000. */
  defaultLeaseMs?: number;
  /**
   * Longest wait for a connection plus one round trip, ms. Past it the call rejects with
   * `BACKEND_UNAVAILABLE` and the connection is destroyed (it may be stuck on a dead server).
   * Default 5 000.
   */
  queryTimeoutMs?: number;
}

/**
 * The checks every lease-row backend makes first: a plain object with known keys only, and
 * exactly one of `pool` or `uri`. `className` names the backend in messages. Throws
 * `INVALID_OPTIONS`; no I/O.
 */
export function checkPoolOrUri<T>(options: unknown, known: readonly string[], className: string, kind: string): { options: Partial<T> & { pool?: unknown; uri?: unknown }; fromUri: boolean } {
  assertOptionKeys(options, known, `${className} options`, kind);
  const o = options as Partial<T> & { pool?: unknown; uri?: unknown };
  const hasPool = o.pool !== undefined && o.pool !== null;
  const hasUri = o.uri !== undefined && o.uri !== null;
  if (hasPool === hasUri) {
    throw new ConclaveError('INVALID_OPTIONS', `${className} needs exactly one of \`pool\` or \`uri\``, { backend: kind });
  }
  return { options: o, fromUri: hasUri };
}

/** `defaultLeaseMs` and `queryTimeoutMs`, defaults filled in. Throws `INVALID_OPTIONS`. */
export function timingOptions(o: SqlLeaseTimingOptions, kind: string): Required<SqlLeaseTimingOptions> {
  const defaultLeaseMs = o.defaultLeaseMs ?? DEFAULT_LEASE_MS;
  assertPositiveInteger(defaultLeaseMs, 'defaultLeaseMs', kind);
  const queryTimeoutMs = o.queryTimeoutMs ?? 5_000;
  assertPositiveInteger(queryTimeoutMs, 'queryTimeoutMs', kind);
  return { defaultLeaseMs, queryTimeoutMs };
}

/** Throws `INVALID_OPTIONS` unless each option of `keys` is absent or a boolean. */
export function assertBooleanOptions<T extends object>(o: T, keys: ReadonlyArray<keyof T & string>, kind: string): void {
  for (const key of keys) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') {
      throw new ConclaveError('INVALID_OPTIONS', `${key} must be a boolean, got ${describeValue(o[key])}`, { backend: kind });
    }
  }
}
