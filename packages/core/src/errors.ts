/**
 * Stable error codes. Match on `code`, never on the message: messages may be reworded,
 * codes may not.
 *
 * - `INVALID_OPTIONS`: an option is missing, unknown (a misspelt key), of the wrong type, out of
 *   range, or inconsistent with another (thrown before any I/O).
 * - `INVALID_NAME`: an election name, candidate id or identifier (table, key prefix, path) is
 *   empty, too long, or contains characters the backend cannot store safely (before any I/O).
 * - `INVALID_URL`: a backend URL cannot be parsed or names an unknown scheme (before any I/O).
 * - `BACKEND_UNAVAILABLE`: the server could not be reached, or did not answer in time.
 * - `BACKEND_ERROR`: the server answered with an error that is not a connectivity problem.
 * - `BACKEND_AUTH`: the server refused the credentials (wrong password, unknown user): retrying
 *   cannot help. `Elector.start()` rejects with it when the first campaign gets it.
 * - `BACKEND_MISCONFIGURED`: the server answered, but the configuration can never work there (an
 *   unknown database, a missing privilege or permission). `start()` rejects with it likewise.
 * - `LEASE_LOST`: an operation needed leadership that this candidate no longer holds.
 * - `NOT_SUPPORTED`: the backend lacks the part asked for (see BACKEND-CONTRACT.md), or cannot serve that call.
 * - `CLOSED`: the backend or elector was closed and cannot be used again.
 * - `MIGRATION_CONFLICT`: a `to-only` candidate of `@conclave/migrate` found a candidate leading
 *   on `from` without taking part in the migration (an old node beside `to-only` nodes, which
 *   share no lease); it refuses to lead while that lasts.
 * - `TIMEOUT`: `waitForLeadership` (or `runOnce`'s wait) ran out of time before this candidate
 *   was elected.
 * - `ABORTED`: the `signal` given to `waitForLeadership` or `runOnce` was aborted before this
 *   candidate was elected; `cause` is the signal's reason.
 * - `STOPPED`: the Elector was stopped (or never started) while `waitForLeadership` waited.
 * - `DRIVER_MISSING`: a backend's database driver (an optional peer dependency of its package:
 *   `mysql2`, `pg`, `ioredis`, `node-zookeeper-client`, `etcd3`) is not installed where that
 *   package can load it; the message names what to install (before any I/O).
 */
export type ConclaveErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_NAME'
  | 'INVALID_URL'
  | 'BACKEND_UNAVAILABLE'
  | 'BACKEND_ERROR'
  | 'BACKEND_AUTH'
  | 'BACKEND_MISCONFIGURED'
  | 'LEASE_LOST'
  | 'NOT_SUPPORTED'
  | 'CLOSED'
  | 'MIGRATION_CONFLICT'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'STOPPED'
  | 'DRIVER_MISSING';

/** Every `ConclaveErrorCode`, in the order of their description. */
export const CONCLAVE_ERROR_CODES: readonly ConclaveErrorCode[] = [
  'INVALID_OPTIONS',
  'INVALID_NAME',
  'INVALID_URL',
  'BACKEND_UNAVAILABLE',
  'BACKEND_ERROR',
  'BACKEND_AUTH',
  'BACKEND_MISCONFIGURED',
  'LEASE_LOST',
  'NOT_SUPPORTED',
  'CLOSED',
  'MIGRATION_CONFLICT',
  'TIMEOUT',
  'ABORTED',
  'STOPPED',
  'DRIVER_MISSING',
];

/** Where an error happened, and what caused it: the third argument of `new ConclaveError`. */
export interface ConclaveErrorDetails {
  /** The election concerned, when there is one; it is also put in the message. */
  election?: string;
  /** The backend kind (`mysql`, `redis`, …), when there is one; it is also put in the message. */
  backend?: string;
  /** The underlying error, kept as the standard `Error.cause`. */
  cause?: unknown;
}

/** The one error class conclave throws. `code` is stable; `cause` keeps the driver's error. */
export class ConclaveError extends Error {
  /** Always `ConclaveError`. */
  override readonly name = 'ConclaveError';
  /** What went wrong; stable across releases (see `ConclaveErrorCode`). */
  readonly code: ConclaveErrorCode;
  /** The election concerned, when there is one. */
  readonly election: string | undefined;
  /** The backend kind concerned (`mysql`, `redis`, …), when there is one. */
  readonly backend: string | undefined;

  constructor(code: ConclaveErrorCode, message: string, details: ConclaveErrorDetails = {}) {
    const where = [
      typeof details.backend === 'string' && details.backend ? `backend ${details.backend}` : '',
      typeof details.election === 'string' && details.election ? `election "${details.election}"` : '',
    ]
      .filter(Boolean)
      .join(', ');
    super(where ? `${message} (${where})` : message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.election = details.election;
    this.backend = details.backend;
  }
}

/** Whether `value` is a `ConclaveError`, and, when `code` is given, one with that code. */
export function isConclaveError(value: unknown, code?: ConclaveErrorCode): value is ConclaveError {
  return value instanceof ConclaveError && (code === undefined || value.code === code);
}

/**
 * Whether `err` says the configuration can never work (`BACKEND_AUTH`, `BACKEND_MISCONFIGURED`):
 * the server answered, and retrying the same call cannot help until someone changes something.
 */
export function isPermanentError(err: unknown): err is ConclaveError {
  return err instanceof ConclaveError && (err.code === 'BACKEND_AUTH' || err.code === 'BACKEND_MISCONFIGURED');
}

/**
 * Wraps a driver error as `BACKEND_UNAVAILABLE` (connectivity) unless it already is a
 * ConclaveError. Backends use it so the core sees one error type.
 */
export function toBackendError(err: unknown, backend: string, election?: string): ConclaveError {
  if (err instanceof ConclaveError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConclaveError('BACKEND_UNAVAILABLE', `backend call failed: ${message}`, { backend, election, cause: err });
}
