import { ConclaveError, DEFAULT_LEASE_MS, assertOptionKeys, assertPositiveInteger, optionKeys, redactUrl } from '@conclave/core';
import { describeValue } from '@conclave/core/internal';
import type { Pool } from 'pg';

const KIND = 'postgres';

/** Default lease table (same name as the MySQL backend's; its columns are this backend's own). */
export const DEFAULT_TABLE = 'conclave_election';

/** Options shared by both ways of connecting. Every duration is in ms. */
export interface PostgresBackendCommonOptions {
  /**
   * The lease table: a lowercase identifier (`a-z`, digits, `_`, not starting with a digit, at
   * most 63 characters), so that it means the same quoted or not. Default `conclave_election`,
   * or the URL's `?table=`. Invalid names throw `INVALID_NAME` from the constructor.
   */
  table?: string;
  /** Schema of the table, same rules as `table`. Default: none (the connection's `search_path`), or `?schema=`. */
  schema?: string;
  /** Run `CREATE TABLE IF NOT EXISTS` (the DDL of `sql/schema.sql`) once, before first use. Default true. */
  createSchema?: boolean;
  /** Lease given by `forceLeader` when none is passed, ms. Default 10 000. */
  defaultLeaseMs?: number;
  /**
   * Longest wait for a connection plus one round trip, ms. Past it the call rejects with
   * `BACKEND_UNAVAILABLE` and the connection is destroyed (it may be stuck on a dead server).
   * Default 5 000.
   */
  queryTimeoutMs?: number;
  /**
   * Fast hand-over: followers `LISTEN` and a release, force or clear sends `NOTIFY`, so they
   * campaign at once instead of at their next poll. Holds one connection of the pool while any
   * candidate of this backend watches. Default true (`capabilities.push` is then
   * `'best-effort'`; with false it is `'none'`).
   */
  wakeUp?: boolean;
}

export type PostgresBackendOptions = PostgresBackendCommonOptions &
  (
    | {
        /** A `pg` Pool you own. conclave never ends it. */
        pool: Pool;
        uri?: undefined;
      }
    | {
        /**
         * `postgres://user:pass@host:5432/db?table=…&schema=…&connectionLimit=4&sslmode=require`
         * (`postgresql://` too). conclave creates the pool and ends it in `close()`. Any other
         * parameter is refused with `INVALID_URL`.
         */
        uri: string;
        pool?: undefined;
      }
  );

const POSTGRES_OPTION_KEYS = optionKeys<PostgresBackendOptions>({
  pool: true,
  uri: true,
  table: true,
  schema: true,
  createSchema: true,
  defaultLeaseMs: true,
  queryTimeoutMs: true,
  wakeUp: true,
});

/** `sslmode`: `disable` (plain TCP), `require` (TLS, certificate not checked), `verify-full` (TLS, certificate and host checked). */
export type PostgresSslMode = 'disable' | 'require' | 'verify-full';

/** Connection settings parsed from a URL; the pool is created from these. */
export interface PostgresUriSettings {
  host: string;
  port: number;
  user?: string;
  password?: string;
  database: string;
  connectionLimit: number;
  table?: string;
  schema?: string;
  sslmode: PostgresSslMode;
}

/** Where the pool comes from; decides who ends it. */
export type PostgresPoolSource = { kind: 'uri'; settings: PostgresUriSettings } | { kind: 'pool'; pool: Pool };

export interface ResolvedPostgresOptions {
  table: string;
  schema: string | null;
  createSchema: boolean;
  defaultLeaseMs: number;
  queryTimeoutMs: number;
  wakeUp: boolean;
  source: PostgresPoolSource;
}

/** Every query parameter a PostgreSQL URL may carry. */
export const POSTGRES_URI_PARAMETERS = ['table', 'schema', 'connectionLimit', 'sslmode'] as const;
const SSL_MODES: readonly PostgresSslMode[] = ['disable', 'require', 'verify-full'];

// Lowercase only: PostgreSQL folds unquoted identifiers to lowercase, so such a name is the same
// table in conclave's quoted SQL and in a DBA's unquoted one. 63 bytes is NAMEDATALEN - 1
// (PostgreSQL docs, "Identifiers and Key Words").
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws `INVALID_NAME` unless `name` is a lowercase identifier. Called before any I/O. */
export function assertIdentifier(name: unknown, what: 'table' | 'schema'): asserts name is string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new ConclaveError(
      'INVALID_NAME',
      `${what} must be a lowercase identifier (a-z, digits and _, not starting with a digit, at most 63 characters), got ${describeValue(name)}`,
      { backend: KIND },
    );
  }
}

/** Parses `postgres://user:pass@host:port/db?table=…`. Throws `INVALID_URL` / `INVALID_NAME`; no I/O. */
export function parsePostgresUri(uri: unknown): PostgresUriSettings {
  if (typeof uri !== 'string' || uri.length === 0) {
    throw new ConclaveError('INVALID_URL', `uri must be a non-empty string, got ${describeValue(uri)}`, { backend: KIND });
  }
  // The user info ends at the last `@`; a raw `/ ? #` in it would make the URL parser split the
  // password into host, path or query, which messages then quote.
  const afterScheme = uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const at = afterScheme.lastIndexOf('@');
  if (at !== -1 && /[/?#]/.test(afterScheme.slice(0, at))) {
    throw new ConclaveError('INVALID_URL', `a "/", "?" or "#" in the user or password must be percent-encoded: ${redact(uri)}`, { backend: KIND });
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // No cause: Node's "Invalid URL" error keeps the whole input, password included.
    throw new ConclaveError('INVALID_URL', `cannot parse the PostgreSQL URL ${redact(uri)}`, { backend: KIND });
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConclaveError('INVALID_URL', `PostgreSQL URL must start with postgres:// or postgresql://, got ${redact(uri)}`, { backend: KIND });
  }
  if (!url.hostname) throw new ConclaveError('INVALID_URL', `PostgreSQL URL has no host: ${redact(uri)}`, { backend: KIND });
  const database = safeDecode(url.pathname.replace(/^\//, ''), uri);
  if (!database || database.includes('/') || database.includes('@')) {
    throw new ConclaveError('INVALID_URL', `PostgreSQL URL must name one database (postgres://host:5432/db): ${redact(uri)}`, { backend: KIND });
  }
  const settings: PostgresUriSettings = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 5432 : Number(url.port),
    database,
    connectionLimit: 4,
    sslmode: 'disable',
  };
  if (url.username) settings.user = safeDecode(url.username, uri);
  if (url.password) settings.password = safeDecode(url.password, uri);
  const where = redact(uri);
  for (const [key, value] of url.searchParams) {
    if (key === 'table' || key === 'schema') {
      assertIdentifier(value, key);
      settings[key] = value;
    } else if (key === 'connectionLimit') {
      const n = Number(value);
      if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) {
        throw new ConclaveError('INVALID_URL', `connectionLimit must be a positive integer in ${where}`, { backend: KIND });
      }
      settings.connectionLimit = n;
    } else if (key === 'sslmode') {
      if (!(SSL_MODES as readonly string[]).includes(value)) {
        throw new ConclaveError('INVALID_URL', `sslmode must be one of ${SSL_MODES.join(', ')}, got ${JSON.stringify(value)} in ${where}`, { backend: KIND });
      }
      settings.sslmode = value as PostgresSslMode;
    } else {
      throw new ConclaveError(
        'INVALID_URL',
        `unknown PostgreSQL URL parameter ${JSON.stringify(key)} in ${where} (known: ${POSTGRES_URI_PARAMETERS.join(', ')})`,
        { backend: KIND },
      );
    }
  }
  return settings;
}

/** Validates options and fills defaults. Throws `INVALID_OPTIONS` / `INVALID_URL` / `INVALID_NAME`; no I/O. */
export function resolvePostgresOptions(options: unknown): ResolvedPostgresOptions {
  assertOptionKeys(options, POSTGRES_OPTION_KEYS, 'PostgresBackend options', KIND);
  const o = options as Partial<PostgresBackendCommonOptions> & { pool?: unknown; uri?: unknown };
  const hasPool = o.pool !== undefined && o.pool !== null;
  const hasUri = o.uri !== undefined && o.uri !== null;
  if (hasPool === hasUri) {
    throw new ConclaveError('INVALID_OPTIONS', 'PostgresBackend needs exactly one of `pool` or `uri`', { backend: KIND });
  }
  let source: PostgresPoolSource;
  let fromUri: { table?: string; schema?: string } = {};
  if (hasUri) {
    const settings = parsePostgresUri(o.uri);
    fromUri = settings;
    source = { kind: 'uri', settings };
  } else {
    const pool = o.pool as { connect?: unknown; query?: unknown };
    if (typeof pool !== 'object' || typeof pool.connect !== 'function' || typeof pool.query !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', `pool must be a pg Pool, got ${describeValue(o.pool)}`, { backend: KIND });
    }
    source = { kind: 'pool', pool: o.pool as Pool };
  }
  const table = o.table ?? fromUri.table ?? DEFAULT_TABLE;
  assertIdentifier(table, 'table');
  const schema = o.schema ?? fromUri.schema ?? null;
  if (schema !== null) assertIdentifier(schema, 'schema');
  const defaultLeaseMs = o.defaultLeaseMs ?? DEFAULT_LEASE_MS;
  assertPositiveInteger(defaultLeaseMs, 'defaultLeaseMs', KIND);
  const queryTimeoutMs = o.queryTimeoutMs ?? 5_000;
  assertPositiveInteger(queryTimeoutMs, 'queryTimeoutMs', KIND);
  for (const key of ['createSchema', 'wakeUp'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') {
      throw new ConclaveError('INVALID_OPTIONS', `${key} must be a boolean, got ${describeValue(o[key])}`, { backend: KIND });
    }
  }
  return { table, schema, createSchema: o.createSchema ?? true, defaultLeaseMs, queryTimeoutMs, wakeUp: o.wakeUp ?? true, source };
}

function safeDecode(part: string, uri: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ConclaveError('INVALID_URL', `bad percent-encoding in the PostgreSQL URL ${redact(uri)}`, { backend: KIND });
  }
}

/** The URL, password hidden, quoted for a message. */
function redact(uri: string): string {
  return JSON.stringify(redactUrl(uri));
}
