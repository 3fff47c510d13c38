import type { Pool, PoolClient, PoolConfig } from 'pg';
import { ConclaveError } from '@conclave/core';
import { givenUpError, loadedOnFirstUse } from '@conclave/core/spi';
import type { PostgresPoolSource, PostgresUriSettings } from './postgres-options';

const KIND = 'postgres';

/** pg, loaded when a backend first makes its pool (see `loadedOnFirstUse`). */
const pg = loadedOnFirstUse(() => require('pg') as typeof import('pg'));

/**
 * SQLSTATE classes and codes that mean "the server is not there / not usable right now", not
 * "your SQL is wrong" (PostgreSQL docs, Appendix A "PostgreSQL Error Codes").
 */
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];
const UNAVAILABLE_CODES = new Set([
  '40001', // serialization_failure (retry)
  '40P01', // deadlock_detected (retry)
  '55P03', // lock_not_available
  '25006', // read_only_sql_transaction: a standby, fail-over in progress
]);

/** SQLSTATEs that mean the server refused the credentials: retrying cannot help. */
const AUTH_CODES = new Set([
  '28P01', // invalid_password (also an unknown role, under password authentication)
  '28000', // invalid_authorization_specification: no pg_hba.conf entry, an unknown role
]);

/** SQLSTATEs that mean the configuration can never work on this server (a missing database or grant). */
const MISCONFIGURED_CODES = new Set([
  '3D000', // invalid_catalog_name: unknown database
  '3F000', // invalid_schema_name: unknown schema
  '42501', // insufficient_privilege
]);

/**
 * Maps a driver error to `BACKEND_AUTH` (credentials refused), `BACKEND_MISCONFIGURED` (no such
 * database, a missing privilege), `BACKEND_UNAVAILABLE` (connectivity) or `BACKEND_ERROR` (the
 * server said no otherwise). PostgreSQL's messages name the role, never the password.
 */
export function toPostgresError(err: unknown, election?: string): ConclaveError {
  if (err instanceof ConclaveError) return err;
  const code = sqlState(err);
  const message = typeof (err as { message?: unknown })?.message === 'string' ? (err as Error).message : String(err);
  const details = { backend: KIND, election, cause: err };
  if (code !== null && AUTH_CODES.has(code)) return new ConclaveError('BACKEND_AUTH', `PostgreSQL refused the credentials: ${message}`, details);
  if (code !== null && MISCONFIGURED_CODES.has(code)) {
    return new ConclaveError('BACKEND_MISCONFIGURED', `PostgreSQL refused this configuration: ${message}`, details);
  }
  const serverSaidNo = code !== null && !UNAVAILABLE_CODES.has(code) && !UNAVAILABLE_CLASSES.includes(code.slice(0, 2));
  return new ConclaveError(serverSaidNo ? 'BACKEND_ERROR' : 'BACKEND_UNAVAILABLE', `PostgreSQL call failed: ${message}`, details);
}

/** The SQLSTATE of a server error (five characters), or null for a client or network error. */
export function sqlState(err: unknown): string | null {
  const cause = err instanceof ConclaveError ? err.cause : err;
  const code = (cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/** undefined_table: the table was dropped behind our back; the schema is created again. */
export function isNoSuchTable(err: unknown): boolean {
  return sqlState(err) === '42P01';
}

/** The pool's settings for a URL: one connection more than asked when the wake-up listener holds one. */
export function poolConfig(settings: PostgresUriSettings, timeoutMs: number, extra: number): PoolConfig {
  const config: PoolConfig = {
    host: settings.host,
    port: settings.port,
    database: settings.database,
    max: settings.connectionLimit + extra,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    allowExitOnIdle: true,
  };
  if (settings.user !== undefined) config.user = settings.user;
  if (settings.password !== undefined) config.password = settings.password;
  if (settings.sslmode !== 'disable') config.ssl = { rejectUnauthorized: settings.sslmode === 'verify-full' };
  return config;
}

/**
 * Runs conclave's statements on a pool with bounded waits: every call takes a connection, runs
 * one statement and hands the connection back. A call that takes longer than `timeoutMs` rejects
 * with `BACKEND_UNAVAILABLE` and destroys its connection, which may be stuck on a frozen server.
 */
export class PostgresExecutor {
  private readonly pool: Pool;
  private readonly owned: boolean;
  private closed = false;

  constructor(source: PostgresPoolSource, private readonly timeoutMs: number, listenerConnections: number) {
    if (source.kind === 'uri') {
      this.pool = new (pg().Pool)(poolConfig(source.settings, timeoutMs, listenerConnections));
      // An idle connection whose server went away emits 'error' on the pool; the next call
      // reports the outage, so this one is dropped here rather than crash the process.
      this.pool.on('error', () => undefined);
      this.owned = true;
    } else {
      this.pool = source.pool;
      this.owned = false;
    }
  }

  /** Runs one statement with bound parameters; resolves with its rows. */
  query(sql: string, values: readonly unknown[], election?: string, signal?: AbortSignal): Promise<Array<Record<string, unknown>>> {
    return this.queryPrepared(() => ({ sql, values }), election, signal);
  }

  /**
   * Runs the statement `prepare` makes once a connection is there (a batch leaves out the calls
   * given up on while it waited); `null` runs nothing and resolves with no rows.
   */
  async queryPrepared(
    prepare: () => { sql: string; values: readonly unknown[] } | null,
    election?: string,
    signal?: AbortSignal,
  ): Promise<Array<Record<string, unknown>>> {
    const client = await this.acquire(election, signal);
    let statement: { sql: string; values: readonly unknown[] } | null;
    try {
      statement = prepare();
    } catch (err) {
      giveBack(client);
      throw err;
    }
    if (statement === null) {
      giveBack(client);
      return [];
    }
    let timer: NodeJS.Timeout | undefined;
    const pending = client.query(statement.sql, statement.values as unknown[]);
    try {
      const result = await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new ConclaveError('BACKEND_UNAVAILABLE', `no PostgreSQL answer within ${this.timeoutMs} ms`, { backend: KIND, election })),
            this.timeoutMs,
          );
        }),
      ]);
      giveBack(client);
      return result.rows as Array<Record<string, unknown>>;
    } catch (err) {
      // A late answer or failure of the abandoned query has nowhere to go.
      pending.catch(() => undefined);
      const mapped = toPostgresError(err, election);
      // A server error (a refusal included) leaves the connection usable; anything else may have
      // left it mid-protocol.
      if (mapped.code !== 'BACKEND_UNAVAILABLE' && sqlState(err) !== null) giveBack(client);
      else destroy(client, err);
      throw mapped;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A connection of the pool, within `timeoutMs`. While it waits, a caller that gives up
   * (`signal`) is answered BACKEND_UNAVAILABLE at once, and the connection, when it comes, goes
   * back unused. The caller hands it back with `giveBack` (or `destroy`).
   */
  acquire(election?: string, signal?: AbortSignal): Promise<PoolClient> {
    if (this.closed) return Promise.reject(closedError(election));
    return new Promise<PoolClient>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', givenUp);
        fn();
        return true;
      };
      const givenUp = () => finish(() => reject(givenUpError(signal!, 'PostgreSQL call', KIND, election ?? '')));
      const timer = setTimeout(
        () => finish(() => reject(new ConclaveError('BACKEND_UNAVAILABLE', `no PostgreSQL connection within ${this.timeoutMs} ms`, { backend: KIND, election }))),
        this.timeoutMs,
      );
      if (signal?.aborted) {
        givenUp();
        return;
      }
      signal?.addEventListener('abort', givenUp, { once: true });
      let connecting: Promise<PoolClient>;
      try {
        connecting = this.pool.connect();
      } catch (err) {
        finish(() => reject(toPostgresError(err, election)));
        return;
      }
      connecting.then(
        (client) => {
          // A connection that fails while checked out emits 'error' on the client, which would
          // crash the process with no listener there; its query reports the failure instead.
          client.on('error', ignore);
          // Too late (timed out or given up): hand the connection back rather than leak it.
          if (!finish(() => resolve(client))) giveBack(client);
        },
        (err: unknown) => finish(() => reject(toPostgresError(err, election))),
      );
    });
  }

  /** Ends the pool if it was created from a URL (a pool passed in stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.owned) await this.pool.end().catch(() => undefined);
  }
}

function ignore(): void {}

/** Hands a connection back to the pool. */
export function giveBack(client: PoolClient): void {
  client.removeListener('error', ignore);
  client.release();
}

/** Takes a connection out of the pool for good and closes its socket at once (not a polite end a frozen server would never answer). */
export function destroy(client: PoolClient, err?: unknown): void {
  // The listener stays: a closing connection may still report an error.
  try {
    client.release(err instanceof Error ? err : new Error('destroyed'));
  } catch {
    // already released
  }
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

export function closedError(election?: string): ConclaveError {
  return new ConclaveError('CLOSED', 'the PostgreSQL backend is closed', { backend: KIND, election });
}
