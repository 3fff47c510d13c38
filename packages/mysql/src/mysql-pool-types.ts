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
  /** Lends a connection (mysql2's `pool.getConnection`). */
  getConnection(callback: (err: unknown, connection: MysqlPoolConnection) => void): void;
  /** Ends the pool. */
  end?(callback?: (err?: unknown) => void): void;
  /** Announces each new connection (conclave listens for its errors, so none goes unhandled). */
  on?(event: 'connection', listener: (connection: MysqlPoolConnection) => void): unknown;
  /** The pool's settings: conclave reads whether `multipleStatements` is on. */
  config?: {
    /** The settings of the pool's connections. */
    connectionConfig?: {
      /** Whether a query may hold several statements (one round trip per attempt when on). */
      multipleStatements?: boolean;
    };
  };
}

/**
 * A pool you pass in: a mysql2 callback pool (`createPool()`), or a `mysql2/promise` pool, whose
 * `.pool` is the callback pool conclave uses. Typed only by the method conclave looks for (and
 * checks at run time), so that the pools of every mysql2 3.x release type-check.
 */
export type MysqlPoolInput =
  | MysqlPoolLike
  | {
      /** The callback pool under a `mysql2/promise` pool. */
      pool: MysqlPoolLike;
    };

/** Anything with mysql2's `getConnection`. */
export interface MysqlPoolLike {
  /** mysql2's `getConnection`, checked at run time. */
  getConnection(...args: any[]): unknown;
}

/** The part of a mysql2 pooled connection that conclave uses. */
export interface MysqlPoolConnection {
  /** Runs one SQL text (conclave's own statements, values rendered as hex literals). */
  query(sql: string, callback: (err: unknown, results: unknown) => void): unknown;
  /** Gives the connection back to the pool. */
  release(): void;
  /** Closes the connection (after an error, or to abandon a statement). */
  destroy(): void;
  /** Reports errors of an idle connection. */
  on(event: 'error', listener: (err: unknown) => void): unknown;
  /** The server's connection id. */
  threadId?: number | null;
}

/** A connection kept for one job (holding or waiting on named locks); only ever destroyed. */
export interface MysqlDedicatedConnection {
  /** Runs one SQL text. */
  query(sql: string, callback: (err: unknown, results: unknown) => void): unknown;
  /** Closes the connection. */
  destroy(): void;
  /** The server's connection id, for `KILL QUERY`. */
  threadId?: number | null;
  /** Reports errors of the connection. */
  on(event: 'error', listener: (err: unknown) => void): unknown;
}
