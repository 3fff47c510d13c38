import { mysql2SslOption } from './mysql-tls';
import { ConclaveError } from '@conclave/core';
import { givenUpError, loadedOnFirstUse } from '@conclave/core/spi';
import type { MysqlPoolSource } from './mysql-options';
import type { MysqlDedicatedConnection, MysqlPool, MysqlPoolConnection } from './mysql-pool-types';

const KIND = 'mysql';

/** mysql2, loaded when a backend first connects (see `loadedOnFirstUse`). */
const mysql2 = loadedOnFirstUse(() => require('mysql2') as typeof import('mysql2'));

/** Accepts a callback pool, or a mysql2/promise pool whose `.pool` is one. */
function asCallbackPool(value: unknown): MysqlPool {
  const candidate = value as { pool?: unknown; getConnection?: unknown } | null;
  if (candidate && typeof candidate === 'object') {
    const inner = candidate.pool as { getConnection?: unknown } | undefined;
    if (inner && typeof inner === 'object' && typeof inner.getConnection === 'function') return inner as MysqlPool;
    if (typeof candidate.getConnection === 'function') return candidate as MysqlPool;
  }
  throw new ConclaveError('INVALID_OPTIONS', 'pool must be a mysql2 pool (createPool from mysql2 or mysql2/promise)', {
    backend: KIND,
  });
}

/** Error numbers that mean "the server is not there / not usable right now", not "your SQL is wrong". */
const UNAVAILABLE_ERRNOS = new Set([
  1040, // too many connections
  1053, // server shutdown in progress
  1205, // lock wait timeout
  1213, // deadlock (retry)
  1290, // --read-only (fail-over in progress)
  1927, // connection killed
  2002, 2003, 2006, 2013, // client: cannot connect, gone away, lost
  4031, // MySQL 8: disconnected by the server because of inactivity
]);

/** Error numbers that mean the server refused the user's credentials: retrying cannot help. */
const AUTH_ERRNOS = new Set([
  1045, // ER_ACCESS_DENIED_ERROR: unknown user or wrong password
  1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR: a user that must log in another way
]);

/** Error numbers that mean the configuration can never work on this server (a missing database or grant). */
const MISCONFIGURED_ERRNOS = new Set([
  1044, // ER_DBACCESS_DENIED_ERROR: no privilege on the database
  1049, // ER_BAD_DB_ERROR: unknown database
  1142, // ER_TABLEACCESS_DENIED_ERROR: a statement not granted on the table
  1143, // ER_COLUMNACCESS_DENIED_ERROR
  1227, // ER_SPECIFIC_ACCESS_DENIED_ERROR: a privilege such as PROCESS is missing
]);

/**
 * Maps a driver error to `BACKEND_AUTH` (credentials refused), `BACKEND_MISCONFIGURED` (no such
 * database, a missing privilege), `BACKEND_UNAVAILABLE` (connectivity) or `BACKEND_ERROR` (the
 * server said no otherwise). MySQL's messages name the user, never the password.
 */
export function toMysqlError(err: unknown, election?: string): ConclaveError {
  if (err instanceof ConclaveError) return err;
  const e = (err ?? {}) as { errno?: unknown; sqlState?: unknown; fatal?: unknown; code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  const details = { backend: KIND, election, cause: err };
  const errno = typeof e.errno === 'number' ? e.errno : null;
  if (errno !== null && AUTH_ERRNOS.has(errno)) return new ConclaveError('BACKEND_AUTH', `MySQL refused the credentials: ${message}`, details);
  if (errno !== null && MISCONFIGURED_ERRNOS.has(errno)) {
    return new ConclaveError('BACKEND_MISCONFIGURED', `MySQL refused this configuration: ${message}`, details);
  }
  const serverError = errno !== null && typeof e.sqlState === 'string' && e.fatal !== true;
  const code = serverError && !UNAVAILABLE_ERRNOS.has(errno) ? 'BACKEND_ERROR' : 'BACKEND_UNAVAILABLE';
  return new ConclaveError(code, `MySQL call failed: ${message}`, details);
}

/** ER_NO_SUCH_TABLE: the table was dropped behind our back; the schema is created again. */
export function isNoSuchTable(err: unknown): boolean {
  const cause = err instanceof ConclaveError ? (err.cause as { errno?: unknown } | undefined) : (err as { errno?: unknown });
  return cause?.errno === 1146;
}

/**
 * Runs conclave's statements on a pool with bounded waits. Every call gets a connection, runs,
 * and hands the connection back; a call that takes longer than `timeoutMs` rejects with
 * `BACKEND_UNAVAILABLE` and destroys its connection, which may be stuck on a frozen server
 * (mysql2's own query timeout leaves such a connection checked out forever).
 */
/**
 * The statements are bound already (`bind` in mysql-sql.ts): sent as they are, instead of mysql2
 * scanning each for placeholders it will not fill (a renewal batch of a thousand elections is a
 * long statement, sent every renew interval).
 */
function sentAsBound(sql: string): string {
  return sql;
}

export class MysqlExecutor {
  private pool: MysqlPool | null = null;
  private poolPromise: Promise<MysqlPool> | null = null;
  private readonly guarded = new WeakSet<object>();
  private closed = false;

  constructor(
    private readonly source: MysqlPoolSource,
    private readonly timeoutMs: number,
    private multipleStatements: boolean | undefined,
  ) {}

  /** Whether several statements go in one round trip; known after the pool is resolved. */
  get batchesStatements(): boolean {
    return this.multipleStatements === true;
  }

  /**
   * Runs `statements` and resolves with one result per statement: in one round trip when the
   * connection accepts multiple statements, else one after another on the same connection.
   */
  async run(statements: string[], election?: string, signal?: AbortSignal): Promise<unknown[]> {
    const connection = await this.acquire(election, signal);
    let ok = false;
    try {
      let results: unknown[];
      if (statements.length === 1) {
        results = [await this.query(connection, statements[0]!, election)];
      } else if (this.multipleStatements) {
        const all = await this.query(connection, statements.join(';\n'), election);
        results = all as unknown[];
      } else {
        results = [];
        for (const sql of statements) results.push(await this.query(connection, sql, election));
      }
      ok = true;
      return results;
    } finally {
      if (ok) connection.release();
    }
  }

  /**
   * A connection taken out of the pool for good (named locks live in one session); `destroy()` it
   * when done. While it waits for one, a caller that gives up (`signal`) is answered
   * BACKEND_UNAVAILABLE at once, and the connection, when it comes, goes back unused.
   */
  acquire(election?: string, signal?: AbortSignal): Promise<MysqlPoolConnection> {
    if (this.closed) return Promise.reject(closedError(election));
    return this.resolvePool(election).then(
      (pool) =>
        new Promise<MysqlPoolConnection>((resolve, reject) => {
          let settled = false;
          const givenUp = () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            reject(givenUpError(signal!, 'MySQL call', KIND, election ?? ''));
          };
          const timer = setTimeout(() => {
            settled = true;
            signal?.removeEventListener('abort', givenUp);
            reject(new ConclaveError('BACKEND_UNAVAILABLE', `no MySQL connection within ${this.timeoutMs} ms`, { backend: KIND, election }));
          }, this.timeoutMs);
          if (signal?.aborted) return givenUp();
          signal?.addEventListener('abort', givenUp, { once: true });
          try {
            pool.getConnection((err, connection) => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', givenUp);
              if (connection) this.guard(connection);
              if (settled) {
                // Too late: the caller gave up. Hand the connection back rather than leak it.
                connection?.release();
                return;
              }
              settled = true;
              if (err || !connection) reject(toMysqlError(err ?? new Error('no connection'), election));
              else resolve(connection);
            });
          } catch (err) {
            clearTimeout(timer);
            signal?.removeEventListener('abort', givenUp);
            settled = true;
            reject(toMysqlError(err, election));
          }
        }),
    );
  }

  /** One query on `connection`; on timeout the connection is destroyed and the call rejects. */
  query(
    connection: MysqlDedicatedConnection,
    sql: string,
    election?: string,
    timeoutMs = this.timeoutMs,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: ConclaveError) => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        connection.destroy();
        reject(err);
      };
      const onAbort = () => {
        if (!settled) fail(closedError(election));
      };
      const timer = setTimeout(
        () => fail(new ConclaveError('BACKEND_UNAVAILABLE', `MySQL did not answer within ${timeoutMs} ms`, { backend: KIND, election })),
        timeoutMs,
      );
      if (signal?.aborted) return fail(closedError(election));
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        connection.query(sql, (err, results) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (settled) return;
          settled = true;
          if (err) {
            // A fatal error has already removed the connection from the pool; anything else
            // leaves it usable, but we destroy it anyway: its session state is unknown.
            connection.destroy();
            reject(toMysqlError(err, election));
          } else {
            resolve(results);
          }
        });
      } catch (err) {
        fail(toMysqlError(err, election));
      }
    });
  }

  /**
   * A connection of its own for named locks, which live in one session. From a pool created from
   * a URI it is a separate connection, so it never takes a pool slot; from a user's pool it is
   * taken out of that pool until conclave destroys it (it counts against `connectionLimit`).
   */
  async dedicated(election?: string): Promise<MysqlDedicatedConnection> {
    if (this.closed) throw closedError(election);
    if (this.source.kind !== 'uri') return this.acquire(election);
    const s = this.source.settings;
    const connection = mysql2().createConnection({
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
      connectTimeout: this.timeoutMs,
      enableKeepAlive: true,
      supportBigNumbers: true,
      queryFormat: sentAsBound,
      ...(s.tls ? { ssl: mysql2SslOption(s.tls) } : {}),
    }) as unknown as MysqlDedicatedConnection;
    connection.on('error', () => {
      /* reported to the running command's callback; the owner notices and reconnects */
    });
    return connection;
  }

  /** Closes the pool if conclave created it; a user's pool is left open. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.source.kind !== 'uri' || !this.poolPromise) return;
    const pool = await this.poolPromise.catch(() => null);
    if (!pool?.end) return;
    await new Promise<void>((resolve) => pool.end!(() => resolve()));
  }

  private resolvePool(election?: string): Promise<MysqlPool> {
    if (this.pool) return Promise.resolve(this.pool);
    if (!this.poolPromise) {
      this.poolPromise = this.createPool().then(
        (pool) => {
          if (this.multipleStatements === undefined) {
            this.multipleStatements = pool.config?.connectionConfig?.multipleStatements === true;
          }
          this.pool = pool;
          return pool;
        },
        (err: unknown) => {
          this.poolPromise = null; // a failing factory is asked again next time
          throw err;
        },
      );
    }
    return this.poolPromise.catch((err: unknown) => {
      throw err instanceof ConclaveError ? err : toMysqlError(err, election);
    });
  }

  private async createPool(): Promise<MysqlPool> {
    const source = this.source;
    if (source.kind === 'pool') return asCallbackPool(source.pool);
    if (source.kind === 'factory') return asCallbackPool(await source.factory());
    const s = source.settings;
    const pool = mysql2().createPool({
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
      connectionLimit: s.connectionLimit,
      maxIdle: s.connectionLimit,
      connectTimeout: this.timeoutMs,
      // Our statements only; every value is a hex literal (mysql-sql.ts), so this cannot be
      // used to smuggle a second statement in.
      multipleStatements: true,
      enableKeepAlive: true,
      supportBigNumbers: true,
      queryFormat: sentAsBound,
      ...(s.tls ? { ssl: mysql2SslOption(s.tls) } : {}),
    }) as unknown as MysqlPool;
    // Idle pooled connections report a lost server as an 'error' event; the pool drops them. This
    // listener only keeps such an event from being unhandled.
    pool.on?.('connection', (connection) => this.guard(connection));
    return pool;
  }

  private guard(connection: MysqlPoolConnection): void {
    if (this.guarded.has(connection)) return;
    this.guarded.add(connection);
    connection.on('error', () => {
      /* the command that was running got the error through its callback; the pool drops the connection */
    });
  }
}

function closedError(election?: string): ConclaveError {
  return new ConclaveError('CLOSED', 'the MySQL backend is closed', { backend: KIND, election });
}
