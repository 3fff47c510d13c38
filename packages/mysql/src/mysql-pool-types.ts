/**
 * The shapes of the mysql2 objects conclave touches, as structural types: users' pools of any
 * mysql2 3.x release fit them, and the options can name them without depending on the executor.
 */

/**
 * The part of a mysql2 (callback) pool that conclave uses. Structural, so that the package does
 * not tie users to one mysql2 type version; a `mysql2/promise` pool is accepted too (its `.pool`
 * is this).
 */
export interface MysqlPool {
  getConnection(callback: (err: unknown, connection: MysqlPoolConnection) => void): void;
  end?(callback?: (err?: unknown) => void): void;
  on?(event: 'connection', listener: (connection: MysqlPoolConnection) => void): unknown;
  config?: { connectionConfig?: { multipleStatements?: boolean } };
}

/**
 * A pool you pass in: a mysql2 callback pool (`createPool()`), or a `mysql2/promise` pool, whose
 * `.pool` is the callback pool conclave uses. Typed only by the method conclave looks for (and
 * checks at run time), so that the pools of every mysql2 3.x release type-check.
 */
export type MysqlPoolInput = MysqlPoolLike | { pool: MysqlPoolLike };

/** Anything with mysql2's `getConnection`. */
export interface MysqlPoolLike {
  getConnection(...args: any[]): unknown;
}

/** The part of a mysql2 pooled connection that conclave uses. */
export interface MysqlPoolConnection {
  query(sql: string, callback: (err: unknown, results: unknown) => void): unknown;
  release(): void;
  destroy(): void;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  threadId?: number | null;
}

/** A connection kept for one job (holding or waiting on named locks); only ever destroyed. */
export interface MysqlDedicatedConnection {
  query(sql: string, callback: (err: unknown, results: unknown) => void): unknown;
  destroy(): void;
  /** The server's connection id, for `KILL QUERY`. */
  threadId?: number | null;
  on(event: 'error', listener: (err: unknown) => void): unknown;
}
