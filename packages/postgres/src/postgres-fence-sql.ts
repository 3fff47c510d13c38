import { tombstoneHolder } from '@conclave/core/spi';

/**
 * The server-identity fence of the lease row, as SQL fragments for the statements of
 * postgres-sql.ts (see the README, "Replicas and failover").
 *
 * Every write that grants, extends or revokes a lease records which server made it
 * (`written_by`). A row another server wrote was replicated here from a primary this server has
 * replaced, which may have granted or renewed the lease after the last change that reached us:
 * such a row is not trusted. The statement that would grant or extend its lease turns it into a
 * fence instead — a revocation tombstone that lasts at least one lease from now on this
 * server's clock, with a token floor of this clock in µs — and the next term starts after it.
 * A NULL `written_by` (a row written before the column existed) is trusted: an upgrade costs no
 * lease, and the next write records the server.
 */

/**
 * This server's identity: the cluster's system identifier (which a streaming standby shares
 * with its primary) and the current timeline (the first 8 hex digits of the current WAL file's
 * name), which a promotion changes. Evaluated by the server that runs the statement; both
 * functions are executable by any role (PostgreSQL docs, "System Information Functions" and
 * "Backup Control Functions") and read the control file and a shared-memory position only
 * (about 10 µs per statement on a 2-core test machine).
 */
export const SERVER_IDENTITY_SQL = `SELECT system_identifier::text || '/' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS server FROM pg_control_system()`;

/** The CTE that computes the identity once per statement, for `ME`. */
export const ME_CTE = `me AS MATERIALIZED (${SERVER_IDENTITY_SQL})`;
/** This server's identity, inside a statement that has `ME_CTE`. */
export const ME = `(SELECT server FROM me)`;

/** The fence's holder: a revocation tombstone without grace (a string constant of the core's, quoted). */
const FENCE_HOLDER = `'${tombstoneHolder(0).replace(/'/g, "''")}'`;

/** Whether the row `l` was last written by another server (NULL: before the column existed, trusted). */
export const foreignRow = (l: string) => `(${l}.written_by IS NOT NULL AND ${l}.written_by <> ${ME})`;

/**
 * The columns a fence writes, given the row's alias, the statement's instant and the lease the
 * batch asks for (an interval). The fence ends no earlier than the lease it replaces, and no
 * earlier than one lease from now — the batch's, or the row's own last one (expires_at −
 * renewed_at) when longer: a lease the old primary granted or renewed before it went away ends
 * within its length of that write, which came before this one. The floor makes every later
 * token exceed any the old primary may have given out: at least the µs clock now.
 */
export function fenceColumns(l: string, now: string, lease: string): { holder: string; expiresAt: string; termFloor: string; writtenBy: string } {
  return {
    holder: FENCE_HOLDER,
    // greatest() skips NULLs: a released row (no expires_at) or one without renewed_at.
    expiresAt: `greatest(${l}.expires_at, ${now} + greatest(${lease}, ${l}.expires_at - ${l}.renewed_at))`,
    termFloor: `greatest(${l}.term_floor, ${l}.term, (extract(epoch FROM ${now}) * 1000000)::bigint)`,
    writtenBy: ME,
  };
}
