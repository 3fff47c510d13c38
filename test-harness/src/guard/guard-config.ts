/**
 * A guarded resource: the kind of store a user protects with the fencing token. It accepts a
 * write only if the write's token is ≥ the highest token it has accepted so far, so a deposed
 * leader that still writes (a frozen process waking up, a partitioned node) is turned away as soon
 * as its successor has written once.
 *
 * - `redis`: one hash updated by a Lua compare-and-set (`token`, `holder`, `seq`, `rejected`).
 * - `mysql`: one row updated with `UPDATE … WHERE name = ? AND token <= ?`.
 *
 * The guard lives on a server that the fault run does not disturb (the shared Redis or MariaDB),
 * as a user's data store would be separate from the election's.
 */
export type GuardConfig =
  | {
      kind: 'redis';
      /** `redis://host:port[/db]`. */
      url: string;
      /** The hash key. Deleted by `dropGuard`. */
      key: string;
      /** A write is attempted this often while leading, ms. Default 20. */
      intervalMs?: number;
    }
  | {
      kind: 'mysql';
      /** `mysql://user@host:port/db`. */
      url: string;
      /** Table (a plain identifier), created if missing. */
      table: string;
      /** The row's name: one guarded resource per name. */
      name: string;
      /** A write is attempted this often while leading, ms. Default 20. */
      intervalMs?: number;
    };

/** What the resource says about one write. */
export interface GuardVerdict {
  accepted: boolean;
  /** Position among accepted writes (1, 2, …), assigned by the resource itself; null when rejected. */
  seq: number | null;
}

/** What the resource holds at the end of a run. */
export interface GuardState {
  /** Highest token accepted (0 when nothing was written). */
  token: number;
  holder: string | null;
  /** Accepted writes. */
  seq: number;
  /** Rejected writes (Redis only; null for MySQL, which does not count them). */
  rejected: number | null;
}
