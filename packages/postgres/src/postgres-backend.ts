import { SqlLeaseBackend } from '@conclave/sql-lease';
import { resolvePostgresOptions, type PostgresBackendOptions } from './postgres-options';
import { PostgresLeaseDialect } from './postgres-lease-dialect';
import { qualified } from './postgres-sql';

/**
 * Leader election on one PostgreSQL table, one row per election, with leases on the server's
 * clock, a fencing term, one statement per batch of attempts and of renewals, and LISTEN/NOTIFY
 * to wake followers. See the package README.
 *
 * `changes.watch` wakes this candidate when the election's lease is released, forced or cleared;
 * `changes.isWatching` is true while the listening connection is up and this election is watched. No
 * `leaderChanges`: a notification is sent when a term ends (release, force, clear), not when a
 * campaign starts the next one nor when a lease merely runs out.
 */
export class PostgresBackend extends SqlLeaseBackend {
  /** The backend kind, in logs, errors and metrics. */
  declare readonly kind: 'postgres';
  /** The lease table, as SQL (`"table"` or `"schema"."table"`). */
  readonly table: string;

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; does no I/O. */
  constructor(options: PostgresBackendOptions) {
    const resolved = resolvePostgresOptions(options);
    const table = qualified(resolved.table, resolved.schema);
    super(resolved, (calls) => new PostgresLeaseDialect(resolved, table, calls));
    this.table = table;
  }
}
