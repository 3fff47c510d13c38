import { SqlLeaseBackend } from '@conclave/sql-lease';
import { resolveMysqlOptions, type MysqlBackendOptions } from './mysql-options';
import { MysqlLeaseDialect } from './mysql-lease-dialect';

/**
 * Leader election on one MySQL/MariaDB table, one row per election,
 * with server-clock leases in ms, a fencing term, one round trip per batch of attempts, batched
 * renewal and a named-lock wake-up for fast hand-over. See the package README.
 *
 * `changes.watch` wakes this candidate when the election's lease is released or forced away (named-lock
 * wake-up). `changes.isWatching` is true while this candidate's waiter holds one of the
 * `maxWatchConnections` slots and waits on a lock a leader holds: the core then looks again only
 * when the lease can end; elections beyond the slots are parked and polled at retryMs. No
 * `leaderChanges`: the named lock tells a session that a term ended, but not that the next one
 * started, nor that a lease was forced or cleared (the revoked leader frees its lock only at its
 * next renewal).
 */
export class MysqlBackend extends SqlLeaseBackend {
  /** The backend kind, in logs, errors and metrics. */
  declare readonly kind: 'mysql';
  /** The lease table this backend uses. */
  readonly table: string;

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; does no I/O. */
  constructor(options: MysqlBackendOptions) {
    const resolved = resolveMysqlOptions(options);
    super(resolved, (calls) => new MysqlLeaseDialect(resolved, calls));
    this.table = resolved.table;
  }
}
