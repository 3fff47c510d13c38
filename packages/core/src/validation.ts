import { ConclaveError } from './errors';

/** Longest election name every backend must store (MySQL column, ZooKeeper node, Redis key). */
export const MAX_ELECTION_NAME_LENGTH = 128;
/** Longest candidate id every backend must store. */
export const MAX_CANDIDATE_ID_LENGTH = 200;

// Letters, digits and `. _ : -`, starting with a letter or digit: safe as a ZooKeeper node name
// (no `/`), inside a Redis hash tag (no braces) and readable in logs.
const ELECTION_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
// Printable ASCII without spaces: hostnames, pids, UUIDs and URLs fit; control characters that
// would corrupt logs or protocols do not.
const CANDIDATE_ID = /^[\x21-\x7e]+$/;

/** Throws `INVALID_NAME` unless `name` is a valid election name. Called before any I/O. */
export function assertElectionName(name: unknown, backend?: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new ConclaveError('INVALID_NAME', 'election name must be a non-empty string', { backend });
  }
  if (name.length > MAX_ELECTION_NAME_LENGTH) {
    throw new ConclaveError(
      'INVALID_NAME',
      `election name is ${name.length} characters long; the limit is ${MAX_ELECTION_NAME_LENGTH}`,
      { backend },
    );
  }
  if (!ELECTION_NAME.test(name)) {
    throw new ConclaveError(
      'INVALID_NAME',
      `election name ${JSON.stringify(name)} may hold only letters, digits and . _ : - and must start with a letter or digit`,
      { backend },
    );
  }
}

/** Throws `INVALID_NAME` unless `id` is a valid candidate id. Called before any I/O. */
export function assertCandidateId(id: unknown, backend?: string, election?: string): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new ConclaveError('INVALID_NAME', 'candidate id must be a non-empty string', { backend, election });
  }
  if (id.length > MAX_CANDIDATE_ID_LENGTH) {
    throw new ConclaveError(
      'INVALID_NAME',
      `candidate id is ${id.length} characters long; the limit is ${MAX_CANDIDATE_ID_LENGTH}`,
      { backend, election },
    );
  }
  if (!CANDIDATE_ID.test(id)) {
    throw new ConclaveError(
      'INVALID_NAME',
      `candidate id ${JSON.stringify(id)} may hold only printable ASCII characters without spaces`,
      { backend, election },
    );
  }
}

/** Largest value a candidate may publish with its candidacy, in UTF-8 bytes. */
export const MAX_LEADER_VALUE_BYTES = 1024;

/**
 * Throws `INVALID_OPTIONS` unless `value` is a string of at most `MAX_LEADER_VALUE_BYTES` UTF-8
 * bytes without lone surrogates (they have no UTF-8 form, so a store would change them).
 * Called before any I/O.
 */
export function assertLeaderValue(value: unknown, backend?: string, election?: string): asserts value is string {
  if (typeof value !== 'string') {
    throw new ConclaveError('INVALID_OPTIONS', `value must be a string, got ${describe(value)}`, { backend, election });
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_LEADER_VALUE_BYTES) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `value is ${bytes} UTF-8 bytes long; the limit is ${MAX_LEADER_VALUE_BYTES}`,
      { backend, election },
    );
  }
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) {
    throw new ConclaveError('INVALID_OPTIONS', 'value holds a lone surrogate, which has no UTF-8 form', { backend, election });
  }
}

/** Throws `INVALID_OPTIONS` unless `value` is a positive safe integer (a duration in ms, a count). */
export function assertPositiveInteger(value: unknown, option: string, backend?: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConclaveError('INVALID_OPTIONS', `${option} must be a positive integer, got ${describe(value)}`, {
      backend,
    });
  }
}

/** Throws `INVALID_OPTIONS` unless `options` is a plain object. */
export function assertOptionsObject(options: unknown, what: string, backend?: string): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConclaveError('INVALID_OPTIONS', `${what} must be an object, got ${describe(options)}`, { backend });
  }
}

/** A short, safe description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value);
  }
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Throws `INVALID_OPTIONS` unless `token` is a safe integer: the fencing token of a `renew` (or a
 * `release` that names its term). A backend checks its own range beyond that.
 */
export function assertRequestToken(token: unknown, backend?: string, election?: string): asserts token is number {
  if (typeof token !== 'number' || !Number.isSafeInteger(token)) {
    throw new ConclaveError('INVALID_OPTIONS', `token must be an integer, got ${describe(token)}`, { backend, election });
  }
}

/**
 * Throws `INVALID_OPTIONS` unless a `release`'s bounds are well formed: `token` absent or an
 * integer, `notAbove` absent or a non-negative integer.
 */
export function assertReleaseBounds(token: unknown, notAbove: unknown, backend?: string, election?: string): void {
  if (token != null && (typeof token !== 'number' || !Number.isSafeInteger(token))) {
    throw new ConclaveError('INVALID_OPTIONS', `token must be an integer or null, got ${describe(token)}`, { backend, election });
  }
  if (notAbove !== undefined && (typeof notAbove !== 'number' || !Number.isSafeInteger(notAbove) || notAbove < 0)) {
    throw new ConclaveError('INVALID_OPTIONS', `notAbove must be a non-negative integer, got ${describe(notAbove)}`, { backend, election });
  }
}

/** Throws `INVALID_OPTIONS` unless `token` is a non-negative safe integer: a `raiseTokenFloor` argument. */
export function assertTokenFloor(token: unknown, backend?: string, election?: string): asserts token is number {
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token < 0) {
    throw new ConclaveError('INVALID_OPTIONS', `token floor must be a non-negative integer, got ${describe(token)}`, { backend, election });
  }
}
