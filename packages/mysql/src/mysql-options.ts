import { ConclaveError } from '@conclave/core';
import { assertPositiveInteger, describeValue, optionKeys } from '@conclave/core/spi';
import { assertBooleanOptions, checkPoolOrUri, parseServerUrl, timingOptions, type SqlLeaseSettings, type SqlLeaseTimingOptions } from '@conclave/sql-lease';
import { MYSQL_TLS_PARAMETERS, parseMysqlTls, type MysqlTlsSettings } from './mysql-tls';
import type { MysqlPoolInput } from './mysql-pool-types';

const KIND = 'mysql';

/** Default table: not the common `leader_election`, whose columns differ (such a table left in place would be kept by `CREATE TABLE IF NOT EXISTS` and then fail every query). */
export const DEFAULT_TABLE = 'conclave_election';

/** Options shared by both ways of connecting (`defaultLeaseMs`, `queryTimeoutMs`: see `SqlLeaseTimingOptions`). Every duration is in ms. */
export interface MysqlBackendCommonOptions extends SqlLeaseTimingOptions {
  /**
   * The lease table: a plain identifier (letters, digits, `_`, `$`, not only digits, ≤ 64
   * characters), in the pool's current database. Default `conclave_election`, or the URI's
   * `?table=`. Invalid names throw `INVALID_NAME` from the constructor.
   */
  table?: string;
  /**
   * Run `CREATE TABLE IF NOT EXISTS` once, before the first statement that needs the table.
   * Default true. Set false when the database user has no DDL rights; create the table from
   * `sql/schema.sql` (or with `ensureSchema()` as a privileged user) instead.
   */
  createSchema?: boolean;
  /**
   * Fast hand-over: wake followers through MySQL named locks (`GET_LOCK`) when a leader releases,
   * instead of waiting for their next poll. Costs one extra connection per leading process and one
   * blocked connection per watched election of a follower (see `maxWatchConnections`).
   * Default true (the backend then has a `changes` part, best-effort; with false it has none).
   */
  wakeUp?: boolean;
  /**
   * Most connections one backend keeps blocked in `GET_LOCK` for followers' wake-up, one per
   * watched election. Elections watched beyond it fall back to polling. Default 8.
   */
  maxWatchConnections?: number;
  /**
   * Whether the pool's connections accept several statements per query (mysql2's
   * `multipleStatements`). With it, every acquire/renew batch is one round trip; without it, the
   * same statements run one after another on one connection (two round trips). Default: read
   * from a mysql2 pool's config, true for a pool created from `uri`.
   */
  multipleStatements?: boolean;
}

/** Options of `new MysqlBackend(options)`: a pool you own, or a URI (then conclave owns the pool), plus the common options. */
export type MysqlBackendOptions = MysqlBackendCommonOptions &
  (
    | {
        /**
         * A mysql2 pool you own (callback `createPool()` or `mysql2/promise`), or a function that
         * resolves to one (called once, on first use). conclave never closes it. Create it with
         * `multipleStatements: true` for one round trip per attempt (conclave only sends its own
         * SQL, with every value rendered as a hex literal).
         */
        pool: MysqlPoolInput | (() => Promise<MysqlPoolInput>);
        /** Not with `pool`. */
        uri?: undefined;
      }
    | {
        /**
         * `mysql://user:pass@host:3306/db?table=leader_election&connectionLimit=4`
         * (`mariadb://` too). conclave creates the pool and closes it in `close()`. TLS:
         * `ssl=true`, `sslCa=PATH`, `sslCert=PATH&sslKey=PATH`, `sslRejectUnauthorized=false`
         * (see the README); any other parameter is refused with `INVALID_URL`.
         */
        uri: string;
        /** Not with `uri`. */
        pool?: undefined;
      }
  );

const MYSQL_OPTION_KEYS = optionKeys<MysqlBackendOptions>({
  pool: true,
  uri: true,
  table: true,
  createSchema: true,
  defaultLeaseMs: true,
  queryTimeoutMs: true,
  wakeUp: true,
  maxWatchConnections: true,
  multipleStatements: true,
});

/** Connection settings parsed from a URI; the pool is created from these in `mysql-pool.ts`. */
export interface MysqlUriSettings {
  /** Server host. */
  host: string;
  /** Server port (default 3306). */
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
  /** TLS from `ssl`, `sslCa`, `sslCert`, `sslKey`, `sslRejectUnauthorized`; absent: plain TCP. */
  tls?: MysqlTlsSettings;
}

/** Where the pool comes from; decides who closes it. */
export type MysqlPoolSource =
  | { kind: 'uri'; settings: MysqlUriSettings }
  | { kind: 'pool'; pool: MysqlPoolInput }
  | { kind: 'factory'; factory: () => Promise<MysqlPoolInput> };

export interface ResolvedMysqlOptions extends SqlLeaseSettings {
  table: string;
  wakeUp: boolean;
  maxWatchConnections: number;
  multipleStatements: boolean | undefined;
  source: MysqlPoolSource;
}

/** Every query parameter a MySQL URI may carry. */
export const MYSQL_URI_PARAMETERS = ['table', 'connectionLimit', ...MYSQL_TLS_PARAMETERS] as const;

// Unquoted MySQL identifier, ASCII subset. Quoted identifiers could hold more, but a name that
// needs quoting is also one a DBA would mistype; refusing it keeps the DDL copy-pasteable.
const IDENTIFIER = /^[A-Za-z0-9_$]{1,64}$/;

/** Throws `INVALID_NAME` unless `table` is a plain identifier. Called before any I/O. */
export function assertTableName(table: unknown): asserts table is string {
  if (typeof table !== 'string' || !IDENTIFIER.test(table) || /^[0-9]+$/.test(table)) {
    throw new ConclaveError(
      'INVALID_NAME',
      `table must be a plain identifier (letters, digits, _ and $, not only digits, at most 64 characters), got ${describeValue(table)}`,
      { backend: KIND },
    );
  }
}

const URI_FORM = { kind: KIND, what: 'MySQL URI', schemes: ['mysql', 'mariadb'], defaultPort: 3306 } as const;

/** Parses `mysql://user:pass@host:port/db?table=…`. Throws `INVALID_URL` / `INVALID_NAME`; no I/O. */
export function parseMysqlUri(uri: unknown): MysqlUriSettings {
  const { host, port, database, user, password, params, where } = parseServerUrl(uri, URI_FORM);
  const settings: MysqlUriSettings = { host, port, database, connectionLimit: 4 };
  if (user !== undefined) settings.user = user;
  if (password !== undefined) settings.password = password;
  const tlsParams = new Map<string, string>();
  for (const [key, value] of params) {
    if (key === 'table') {
      assertTableName(value);
      settings.table = value;
    } else if (key === 'connectionLimit') {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n <= 0) {
        throw new ConclaveError('INVALID_URL', `connectionLimit must be a positive integer in ${where}`, {
          backend: KIND,
        });
      }
      settings.connectionLimit = n;
    } else if ((MYSQL_TLS_PARAMETERS as readonly string[]).includes(key)) {
      tlsParams.set(key, value);
    } else {
      throw new ConclaveError(
        'INVALID_URL',
        `unknown MySQL URI parameter ${JSON.stringify(key)} in ${where} (known: ${MYSQL_URI_PARAMETERS.join(', ')})`,
        { backend: KIND },
      );
    }
  }
  const tls = parseMysqlTls(tlsParams, where);
  if (tls) settings.tls = tls;
  return settings;
}

/** Validates options and fills defaults. Throws `INVALID_OPTIONS` / `INVALID_URL` / `INVALID_NAME`; no I/O. */
export function resolveMysqlOptions(options: unknown): ResolvedMysqlOptions {
  const { options: o, fromUri } = checkPoolOrUri<MysqlBackendCommonOptions>(options, MYSQL_OPTION_KEYS, 'MysqlBackend', KIND);
  let source: MysqlPoolSource;
  let uriTable: string | undefined;
  if (fromUri) {
    const settings = parseMysqlUri(o.uri);
    uriTable = settings.table;
    source = { kind: 'uri', settings };
  } else if (typeof o.pool === 'function') {
    source = { kind: 'factory', factory: o.pool as () => Promise<MysqlPoolInput> };
  } else if (typeof o.pool === 'object') {
    source = { kind: 'pool', pool: o.pool as MysqlPoolInput };
  } else {
    throw new ConclaveError('INVALID_OPTIONS', `pool must be a mysql2 pool or a function returning one, got ${describeValue(o.pool)}`, {
      backend: KIND,
    });
  }

  const table = o.table ?? uriTable ?? DEFAULT_TABLE;
  assertTableName(table);
  const { defaultLeaseMs, queryTimeoutMs } = timingOptions(o, KIND);
  const maxWatchConnections = o.maxWatchConnections ?? 8;
  assertPositiveInteger(maxWatchConnections, 'maxWatchConnections', KIND);
  assertBooleanOptions(o, ['createSchema', 'wakeUp', 'multipleStatements'], KIND);
  return {
    table,
    createSchema: o.createSchema ?? true,
    defaultLeaseMs,
    queryTimeoutMs,
    wakeUp: o.wakeUp ?? true,
    maxWatchConnections,
    multipleStatements: o.multipleStatements ?? (source.kind === 'uri' ? true : undefined),
    source,
  };
}
