import { ConclaveError } from '@conclave/core';
import { describeValue, optionKeys } from '@conclave/core/spi';
import { assertBooleanOptions, checkPoolOrUri, parseServerUrl, timingOptions, type SqlLeaseSettings, type SqlLeaseTimingOptions } from '@conclave/sql-lease';
import type { Pool } from 'pg';

const KIND = 'postgres';

/** Default lease table (same name as the MySQL backend's; its columns are this backend's own). */
export const DEFAULT_TABLE = 'conclave_election';

/** Options shared by both ways of connecting (`defaultLeaseMs`, `queryTimeoutMs`: see `SqlLeaseTimingOptions`). Every duration is in ms. */
export interface PostgresBackendCommonOptions extends SqlLeaseTimingOptions {
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
  /**
   * Fast hand-over: followers `LISTEN` and a release, force or clear sends `NOTIFY`, so they
   * campaign at once instead of at their next poll. Holds one connection of the pool while any
   * candidate of this backend watches. Default true (the backend then has a `changes`
   * part, best-effort; with false it has none).
   */
  wakeUp?: boolean;
}

/** Options of `new PostgresBackend(options)`: a `pg` pool you own, or a URI (then conclave owns the pool), plus the common options. */
export type PostgresBackendOptions = PostgresBackendCommonOptions &
  (
    | {
        /** A `pg` Pool you own. conclave never ends it. */
        pool: Pool;
        /** Not with `pool`. */
        uri?: undefined;
      }
    | {
        /**
         * `postgres://user:pass@host:5432/db?table=…&schema=…&connectionLimit=4&sslmode=require`
         * (`postgresql://` too). conclave creates the pool and ends it in `close()`. Any other
         * parameter is refused with `INVALID_URL`.
         */
        uri: string;
        /** Not with `uri`. */
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
  /** Server host. */
  host: string;
  /** Server port (default 5432). */
  port: number;
  /** User name, when the URI has one. */
  user?: string;
  /** Password, when the URI has one (never logged). */
  password?: string;
  /** Database (the URI's path). */
  database: string;
  /** Pool size (`connectionLimit=`, default 4). */
  connectionLimit: number;
  /** Lease table (`table=`), when given. */
  table?: string;
  /** Schema of the table (`schema=`), when given. */
  schema?: string;
  /** TLS (`sslmode=`, default `disable`). */
  sslmode: PostgresSslMode;
}

/** Where the pool comes from; decides who ends it. */
export type PostgresPoolSource = { kind: 'uri'; settings: PostgresUriSettings } | { kind: 'pool'; pool: Pool };

export interface ResolvedPostgresOptions extends SqlLeaseSettings {
  table: string;
  schema: string | null;
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

const URI_FORM = { kind: KIND, what: 'PostgreSQL URL', schemes: ['postgres', 'postgresql'], defaultPort: 5432 } as const;

/** Parses `postgres://user:pass@host:port/db?table=…`. Throws `INVALID_URL` / `INVALID_NAME`; no I/O. */
export function parsePostgresUri(uri: unknown): PostgresUriSettings {
  const { host, port, database, user, password, params, where } = parseServerUrl(uri, URI_FORM);
  const settings: PostgresUriSettings = { host, port, database, connectionLimit: 4, sslmode: 'disable' };
  if (user !== undefined) settings.user = user;
  if (password !== undefined) settings.password = password;
  for (const [key, value] of params) {
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
  const { options: o, fromUri } = checkPoolOrUri<PostgresBackendCommonOptions>(options, POSTGRES_OPTION_KEYS, 'PostgresBackend', KIND);
  let source: PostgresPoolSource;
  let uriNames: { table?: string; schema?: string } = {};
  if (fromUri) {
    const settings = parsePostgresUri(o.uri);
    uriNames = settings;
    source = { kind: 'uri', settings };
  } else {
    const pool = o.pool as { connect?: unknown; query?: unknown };
    if (typeof pool !== 'object' || typeof pool.connect !== 'function' || typeof pool.query !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', `pool must be a pg Pool, got ${describeValue(o.pool)}`, { backend: KIND });
    }
    source = { kind: 'pool', pool: o.pool as Pool };
  }
  const table = o.table ?? uriNames.table ?? DEFAULT_TABLE;
  assertIdentifier(table, 'table');
  const schema = o.schema ?? uriNames.schema ?? null;
  if (schema !== null) assertIdentifier(schema, 'schema');
  const { defaultLeaseMs, queryTimeoutMs } = timingOptions(o, KIND);
  assertBooleanOptions(o, ['createSchema', 'wakeUp'], KIND);
  return { table, schema, createSchema: o.createSchema ?? true, defaultLeaseMs, queryTimeoutMs, wakeUp: o.wakeUp ?? true, source };
}
