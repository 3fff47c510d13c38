/**
 * Every SQL statement of the MySQL backend, as pure functions of their inputs.
 *
 * Compatibility (MySQL 5.7, 8.0, 8.4; MariaDB 10.6+):
 * - Time is the server's `UTC_TIMESTAMP(3)`: millisecond precision like `NOW(3)`, but independent
 *   of each session's `time_zone` and of daylight-saving jumps, so sessions configured
 *   differently, and a DST change during a lease, compare the same instants (the common `now()` and `TIMESTAMP`
 *   have second precision and the session's zone). It is evaluated once per
 *   statement, so every row of a batch sees the same "now".
 * - No `VALUES(col)` in `ON DUPLICATE KEY UPDATE` (deprecated since MySQL 8.0.20) and no
 *   `AS new` row alias (MySQL 8.0.19+ only, unknown to MariaDB and 5.7): the candidate id and
 *   lease are bound a second time in the UPDATE part, which every version accepts.
 * - No `RETURNING` (MariaDB only): outcomes are read back by a `SELECT` sent in the same query
 *   (see `campaignScript`).
 */

import { createHash } from 'node:crypto';
import { candidateOf, tombstoneHolder } from '@conclave/core/spi';

/** A value that goes into SQL: strings as hex literals, numbers as safe integers, null as NULL. */
export type SqlValue = string | number | null;

/**
 * Renders `?` placeholders. This is conclave's parameter binding: values never become SQL text.
 * Strings go as hex literals (`X'6e6f6465'`): unlike quoted-and-escaped strings, they cannot be
 * misread under `NO_BACKSLASH_ESCAPES` or a multi-byte connection charset, so an id such as
 * `x');DROP TABLE t;--` stays data in every session. Numbers must be safe integers.
 */
export function bind(sql: string, values: readonly SqlValue[]): string {
  // split/join, not a replace callback: a batch of a thousand elections has thousands of
  // placeholders, bound every renew interval.
  const parts = sql.split('?');
  if (parts.length - 1 !== values.length) throw new Error(`bind: ${values.length} values for ${parts.length - 1} placeholders`);
  let out = parts[0] as string;
  for (let i = 0; i < values.length; i++) out += literal(values[i] as SqlValue) + (parts[i + 1] as string);
  return out;
}

/** Hex literals of recent strings: election names and candidate ids come back every renewal. */
const hexLiterals = new Map<string, string>();
const HEX_LITERALS_KEPT = 100_000;

export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`bind: ${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value !== 'string') throw new Error(`bind: unsupported value of type ${typeof value}`);
  let hex = hexLiterals.get(value);
  if (hex === undefined) {
    // The hex literal is a binary string; compared with the ascii_bin columns it compares bytes,
    // which is what we want. An empty string needs the special form X''.
    hex = `X'${Buffer.from(value, 'utf8').toString('hex')}'`;
    if (hexLiterals.size >= HEX_LITERALS_KEPT) hexLiterals.clear();
    hexLiterals.set(value, hex);
  }
  return hex;
}

/** `table` has been validated as a plain identifier (mysql-options.ts); quoting is belt and braces. */
function q(table: string): string {
  return `\`${table}\``;
}

const NOW = 'UTC_TIMESTAMP(3)';
/** The lease is free: released/cleared (holder NULL) or expired on the server's clock. */
const FREE = `(holder IS NULL OR expires_at IS NULL OR expires_at <= ${NOW})`;

/**
 * The identity of the server that runs a batch, captured by `serverIdentitySql`, the first
 * statement of every batch that writes `written_by`. A user variable, not `@@server_id` in the
 * writes: statement-based replication logs a user variable with its value, while a replica
 * re-evaluates system variables (MariaDB's applier reports the origin's server id but its own
 * port), so the replica's copy of the row would not name the primary
 * (test/mysql-replica-identity.test.ts).
 */
const SERVER = '@conclave_server';

/**
 * Sets `@conclave_server` for this session: `server_id/hostname:port`. MariaDB has no
 * `@@server_uuid`; replication needs a primary and its replicas to have different server ids,
 * and hostname and port tell apart servers elsewhere that share an id. utf8mb4_bin, as the
 * `written_by` column: compared byte for byte.
 */
export function serverIdentitySql(): string {
  return `SET ${SERVER} = CONVERT(CONCAT(@@server_id, '/', @@hostname, ':', @@port) USING utf8mb4) COLLATE utf8mb4_bin`;
}

/**
 * The server-identity fence, first in every batch that can grant, extend or revoke a lease (after
 * `serverIdentitySql`): each of `elections`' rows last written by another server (a primary this
 * server replicated, before a failover made it primary) becomes a revocation tombstone
 * (`tombstoneHolder(0)`) that lasts a lease from now, and its next term starts above this server's
 * clock in µs since the epoch. See the package README, "Replicas and failover", for why this
 * bound and this floor.
 * - `expires_at`: the later of the row's own end and now + the longer of `leaseMs` and the row's
 *   last lease (`expires_at − renewed_at`): the old leader counted its deadline from a renewal the
 *   old primary answered before this server's first write, so a lease from now outlasts it
 *   (durations on this server's clock only, never a comparison of two servers' clocks).
 * - `term_floor`: at least the row's term, and this server's µs clock, which is above every token
 *   the old primary can have handed out since its own last fence (or at all, before any).
 * A row with `written_by` NULL (written before the column existed) is not fenced: an upgrade
 * does not cost a lease. The assignments read only columns not yet assigned, so they mean the same
 * under left-to-right and simultaneous assignment.
 */
export function fenceSql(table: string, elections: readonly string[], leaseMs: number): string {
  return bind(
    `UPDATE ${q(table)} SET ${FENCE_ASSIGNMENTS}
WHERE name IN (${elections.map(() => '?').join(', ')}) AND ${FOREIGN}`,
    [...fenceValues(leaseMs), ...elections],
  );
}

/**
 * `fenceSql` for a campaign batch, as an upsert: a row that does not exist yet is created free
 * (term 0, this server's), for the campaign's upsert that follows to take. An `UPDATE` naming a
 * missing row would lock the gap up to the next row, and so wait on another holder's renewal
 * that has that row locked; an insert waits on nothing the campaign's own upsert would not.
 */
export function fenceOrCreateSql(table: string, elections: readonly string[], leaseMs: number): string {
  const fence = FENCE_COLUMNS.map((column) => `${column} = IF(${FOREIGN}, ${FENCE_VALUE[column]}, ${column})`).join(',\n  ');
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, expires_at, written_by) VALUES ${elections.map(() => `(?, NULL, 0, NULL, ${SERVER})`).join(', ')}
ON DUPLICATE KEY UPDATE
  ${fence}`,
    [...elections, ...fenceValues(leaseMs)],
  );
}

/** A row another server wrote last (NULL: written before the column existed, not fenced). */
const FOREIGN = `(written_by IS NOT NULL AND written_by <> ${SERVER})`;

/**
 * What the fence writes, column by column, in this order: `written_by` last, as the others read
 * it (through `FOREIGN` in the upsert form); each reads only columns not yet assigned.
 */
const FENCE_COLUMNS = ['expires_at', 'term_floor', 'holder', 'written_by'] as const;
const FENCE_VALUE: Record<(typeof FENCE_COLUMNS)[number], string> = {
  expires_at: `GREATEST(COALESCE(expires_at, ${NOW}), ${NOW} + INTERVAL GREATEST(?, COALESCE(TIMESTAMPDIFF(MICROSECOND, renewed_at, expires_at), 0)) MICROSECOND)`,
  term_floor: `GREATEST(term_floor, term, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)))`,
  holder: '?',
  written_by: SERVER,
};
const FENCE_ASSIGNMENTS = FENCE_COLUMNS.map((column) => `${column} = ${FENCE_VALUE[column]}`).join(',\n  ');

/** The values of the fence's placeholders, in `FENCE_COLUMNS` order: the lease (µs), the tombstone. */
function fenceValues(leaseMs: number): SqlValue[] {
  return [leaseMs * 1000, tombstoneHolder(0)];
}

/** The same DDL as sql/schema.sql; see there for why each column is what it is. */
export function schemaSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${q(table)} (
  \`name\` VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'election name',
  \`holder\` VARCHAR(240) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'instance id (candidate id, space, nonce) or forced candidate id of the lease holder; NULL when released or cleared',
  \`term\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fencing token: +1 whenever the lease changes hands',
  \`expires_at\` DATETIME(3) NULL COMMENT 'lease end, UTC, server clock (UTC_TIMESTAMP(3))',
${METADATA_COLUMNS.map(([name, ddl]) => `  \`${name}\` ${ddl},\n`).join('')}  PRIMARY KEY (\`name\`)
) ENGINE=InnoDB COMMENT='conclave leader election leases'`;
}

/**
 * Columns added after the first release, with their DDL: tables created by earlier builds get them
 * from `addColumnSql` (see `missingColumnsSql`). Each has a default, so rows written before the
 * column existed read as "not known" (NULL) or 0.
 */
export const METADATA_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ['term_floor', "BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the next term is above this (raiseTokenFloor, for migrations)'"],
  ['holder_value', "VARBINARY(1024) NULL COMMENT 'value published by the holder (UTF-8); NULL when none'"],
  ['term_started_at', "DATETIME(3) NULL COMMENT 'start of the current term, UTC, server clock'"],
  ['renewed_at', "DATETIME(3) NULL COMMENT 'last take, join or renewal of the lease, UTC, server clock'"],
  ['transitions', "BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'terms started since this column exists (unlike term, not moved by term_floor)'"],
  ['written_by', "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'server that last granted, extended or revoked the lease (server_id/hostname:port); NULL when not known'"],
];

/** The lease table's column names, to find the `METADATA_COLUMNS` an older table lacks. */
export function columnsSql(table: string): string {
  return bind(
    `SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`,
    [table],
  );
}

/** Adds one of `METADATA_COLUMNS` to a table created by an earlier build. */
export function addColumnSql(table: string, column: string): string {
  const entry = METADATA_COLUMNS.find(([name]) => name === column);
  if (!entry) throw new Error(`addColumnSql: unknown column ${column}`);
  return `ALTER TABLE ${q(table)} ADD COLUMN \`${entry[0]}\` ${entry[1]}`;
}

export interface CampaignGroup {
  candidateId: string;
  leaseMs: number;
  /** Published with the candidacy; null when none. */
  value: string | null;
  elections: string[];
}

/**
 * Acquire-or-join for one candidate in many elections: the usual atomic upsert, one row per
 * election, with what the usual versions get wrong fixed:
 * - the row is taken only when the lease is free on the server's clock, renewed only for its
 *   holder (not the usual `IF(last_seen_active < now() - INTERVAL ? SECOND, …)`), in ms;
 * - `term` goes up by one exactly when the row changes hands (new term ⇒ new fencing token),
 *   and above `term_floor` when a migration raised it (see `raiseFloorSql`);
 *   a live holder campaigning again keeps its term and gets its lease extended;
 * - an instance id (`"<candidate> <nonce>"`) adopts, same term, a lease forced to its bare
 *   candidate id (`holder = candidate`), so two instances of one candidate never share a term;
 * - leader metadata: a new term counts a transition and records its start; whenever we now hold
 *   the lease, `renewed_at` and our value are written.
 *
 * The order of the assignments matters. MySQL evaluates them left to right, each seeing the
 * columns already assigned; MariaDB does the same unless `SIMULTANEOUS_ASSIGNMENT` is set, then
 * each sees the old row. `term`, the metadata columns and `holder` come first and read only columns not
 * yet assigned (`holder`, `expires_at`). `expires_at` reads `holder`, which differs between the two modes,
 * but its condition (`holder` is us or our bare candidate id, or the lease was free) is true in
 * both exactly when we now hold the lease: left to right, `holder` is us iff we were the holder,
 * adopted a forced lease or took the free row; simultaneously, the old `holder` is us or our
 * candidate id, or the old lease was free. Same answer either way.
 */
export function campaignSql(table: string, group: CampaignGroup): string {
  const rows = group.elections.map(() => `(?, ?, 1, ${NOW} + INTERVAL ? MICROSECOND, ?, ${NOW}, ${NOW}, 1, ${SERVER})`).join(', ');
  const values: SqlValue[] = [];
  const leaseUs = group.leaseMs * 1000;
  for (const election of group.elections) values.push(election, group.candidateId, leaseUs, group.value);
  const candidate = candidateOf(group.candidateId);
  values.push(candidate, group.candidateId, candidate, group.candidateId, group.value);
  values.push(candidate, group.candidateId, group.candidateId, candidate, leaseUs);
  const ours = `(${FREE} OR holder = ? OR holder = ?)`;
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, expires_at, holder_value, term_started_at, renewed_at, transitions, written_by) VALUES ${rows}
ON DUPLICATE KEY UPDATE
  term = IF(${FREE}, GREATEST(term, term_floor) + 1, term),
  transitions = IF(${FREE}, transitions + 1, transitions),
  term_started_at = IF(${FREE}, ${NOW}, term_started_at),
  renewed_at = IF(${ours}, ${NOW}, renewed_at),
  holder_value = IF(${ours}, ?, holder_value),
  holder = IF(${FREE} OR holder = ?, ?, holder),
  expires_at = IF(holder = ? OR holder = ? OR ${FREE}, ${NOW} + INTERVAL ? MICROSECOND, expires_at),
  written_by = ${SERVER}`,
    values,
  );
}

export interface RenewItem {
  election: string;
  candidateId: string;
  token: number;
}

/**
 * Extends the leases of many terms at once (batched renewal): only rows whose holder and term are
 * still the ones asked for and whose lease has not run out. Never creates a row or a lease.
 * The `name IN (…)` part lets every version use the primary key; the row-constructor `IN` is the
 * per-row holder+token check.
 */
export function renewSql(table: string, leaseMs: number, items: readonly RenewItem[]): string {
  const values: SqlValue[] = [leaseMs * 1000];
  for (const item of items) values.push(item.election);
  for (const item of items) values.push(item.election, item.candidateId, item.token);
  return bind(
    `UPDATE ${q(table)} SET renewed_at = ${NOW}, expires_at = ${NOW} + INTERVAL ? MICROSECOND, written_by = ${SERVER}
WHERE name IN (${items.map(() => '?').join(', ')})
  AND (name, holder, term) IN (${items.map(() => '(?, ?, ?)').join(', ')})
  AND expires_at > ${NOW}`,
    values,
  );
}

/** The row of each election after the writes, with the time left on the server's clock (µs). */
export function readRowsSql(table: string, elections: readonly string[]): string {
  return bind(
    `SELECT name, holder, term, TIMESTAMPDIFF(MICROSECOND, ${NOW}, expires_at) AS remaining_us
FROM ${q(table)} WHERE name IN (${elections.map(() => '?').join(', ')})`,
    elections,
  );
}

/**
 * Gives the lease up, only if `candidateId` holds it (and, with a token, only that term; without
 * one but with `notAbove`, only a term no greater).
 * Not a `DELETE … WHERE name=? AND node=?`: deleting would also delete the term, and the next
 * leader would start again at token 1. The row stays with `holder` NULL.
 */
export function releaseSql(table: string, election: string, candidateId: string, token: number | null, notAbove?: number): string {
  if (token === null && notAbove !== undefined) {
    // Each call runs on its own connection: a release that reached a stalled server can run after
    // the campaign that followed it. It must not end a term its caller had not seen.
    return bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ? AND term <= ?`, [
      election,
      candidateId,
      notAbove,
    ]);
  }
  return token === null
    ? bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ?`, [election, candidateId])
    : bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ? AND term = ?`, [
        election,
        candidateId,
        token,
      ]);
}

/**
 * A tombstone row: a revoked lease, held by nobody (see `tombstoneHolder` in @conclave/core: a
 * space, then how many ms the tombstone outlives the revoked lease). No candidate or instance id
 * starts with a space.
 */
const TOMB = `LEFT(holder, 1) = X'20'`;
/**
 * The tombstone's grace, ms, read back from its holder; 0 for any other row. The `IF` keeps the
 * cast away from candidate ids: in strict mode, a cast that truncates is an error in a write.
 */
const GRACE_MS = `IF(${TOMB}, CAST(SUBSTRING(holder, 2) AS UNSIGNED), 0)`;
/** A live lease held by a candidate (not a tombstone). */
const HELD = `(holder IS NOT NULL AND expires_at > ${NOW} AND NOT ${TOMB})`;

/**
 * Admin revocation (clearLeader, first step of forceLeader): the live lease becomes a tombstone
 * that keeps its term and lives `graceMs` past the lease's end, so its holder's renewals are
 * refused and campaigns stay followers until then. Then a tombstone already there (another
 * admin's) is made to live `graceMs` past the end of the lease it revoked, if it would not. With
 * `keepFor`, a lease held by that candidate (bare or any instance of it) is left alone.
 *
 * `expires_at` is assigned before `holder` and reads only the old `holder`, so the statements mean
 * the same under left-to-right and simultaneous assignment. Sent with `readRowsSql` after them, so
 * the caller learns what it revoked and when that lease ends on the server's clock.
 */
export function revokeSql(table: string, election: string, graceMs: number, keepFor: string | null): string[] {
  const tomb = tombstoneHolder(graceMs);
  const keep = keepFor === null ? '' : ` AND holder <> ? AND LEFT(holder, ?) <> ?`;
  const keepValues: SqlValue[] = keepFor === null ? [] : [keepFor, keepFor.length + 1, `${keepFor} `];
  return [
    bind(
      `UPDATE ${q(table)} SET expires_at = expires_at + INTERVAL ? MICROSECOND, holder = ?, written_by = ${SERVER}
WHERE name = ? AND ${HELD}${keep}`,
      [graceMs * 1000, tomb, election, ...keepValues],
    ),
    bind(
      `UPDATE ${q(table)} SET expires_at = expires_at + INTERVAL (? - ${GRACE_MS}) * 1000 MICROSECOND, holder = ?, written_by = ${SERVER}
WHERE name = ? AND holder IS NOT NULL AND ${TOMB} AND expires_at > ${NOW} AND ${GRACE_MS} < ?`,
      [graceMs, tomb, election, graceMs],
    ),
  ];
}

/**
 * Admin force, second step: `candidateId` leads in a new term, only if the lease is free or a
 * tombstone whose revoked lease has ended on the server's clock. An upsert, not a `REPLACE` (which
 * deletes and re-inserts, and would reset the term): the new term is above every earlier one and
 * the floor. `LAST_INSERT_ID(expr)` puts the new term in the OK packet's insert id (0 when
 * nothing was installed), so the token is known from this one statement even if another admin
 * forces again right after (a read-back could see theirs).
 *
 * `term`, the metadata columns and `holder` read only columns not yet assigned (`renewed_at` reads
 * the old `holder` in both modes); `expires_at` reads `holder`, which is
 * the new holder (left to right) or the old one (simultaneous): either way the condition holds
 * exactly when this statement installs `candidateId`, or when it already held the lease.
 */
export function installSql(table: string, election: string, candidateId: string, leaseMs: number): string {
  const leaseUs = leaseMs * 1000;
  const ok = `(${FREE} OR (${TOMB} AND expires_at - INTERVAL ${GRACE_MS} * 1000 MICROSECOND <= ${NOW}))`;
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, expires_at, term_started_at, renewed_at, transitions, written_by)
VALUES (?, ?, LAST_INSERT_ID(1), ${NOW} + INTERVAL ? MICROSECOND, ${NOW}, ${NOW}, 1, ${SERVER})
ON DUPLICATE KEY UPDATE
  term = IF(${ok}, LAST_INSERT_ID(GREATEST(term, term_floor) + 1), term + LAST_INSERT_ID(0)),
  transitions = IF(${ok}, transitions + 1, transitions),
  term_started_at = IF(${ok}, ${NOW}, term_started_at),
  renewed_at = IF(holder = ? OR ${ok}, ${NOW}, renewed_at),
  holder_value = IF(${ok}, NULL, holder_value),
  holder = IF(${ok}, ?, holder),
  expires_at = IF(holder = ? OR ${ok}, ${NOW} + INTERVAL ? MICROSECOND, expires_at),
  written_by = ${SERVER}`,
    [election, candidateId, leaseUs, candidateId, candidateId, candidateId, leaseUs],
  );
}

/**
 * Makes the next term's token greater than `floor` without touching the current term (whose
 * holder renews by its token): the floor is kept beside the term and applied when the row next
 * changes hands. Creates the row if the election has none yet.
 */
export function raiseFloorSql(table: string, election: string, floor: number): string {
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, term_floor, expires_at, written_by) VALUES (?, NULL, 0, ?, NULL, ${SERVER})
ON DUPLICATE KEY UPDATE term_floor = GREATEST(term_floor, ?)`,
    [election, floor, floor],
  );
}

/** A UTC DATETIME(3) column as ms since the Unix epoch (UNIX_TIMESTAMP would read it in the session's zone). */
function epochMs(column: string): string {
  return `TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${column}) DIV 1000`;
}

/**
 * Who leads, only while the lease is live on the server and not revoked (a tombstone), with the
 * leader metadata (times as ms since the epoch; NULL when not known, e.g. a term that started
 * before the columns were added).
 */
export function leaderSql(table: string, election: string): string {
  return bind(
    `SELECT holder, term, holder_value, transitions, ${epochMs('term_started_at')} AS since_ms,
  ${epochMs('renewed_at')} AS renewed_ms, ${epochMs('expires_at')} AS ends_ms
FROM ${q(table)} WHERE name = ? AND ${HELD}`,
    [election],
  );
}

/**
 * The elections whose term is no longer the one given (`terms[i]` for `elections[i]`), or whose lease is free: what
 * the followers parked beyond `maxWatchConnections` need to hear of. Read-only, on the primary
 * key; at steady state it returns nothing.
 */
export function changedTermsSql(table: string, elections: readonly string[], terms: readonly number[]): string {
  const values: SqlValue[] = [...elections];
  elections.forEach((election, i) => values.push(election, terms[i] as number));
  return bind(
    `SELECT name FROM ${q(table)} WHERE name IN (${elections.map(() => '?').join(', ')})
  AND ((name, term) NOT IN (${elections.map(() => '(?, ?)').join(', ')}) OR ${FREE})`,
    values,
  );
}

/**
 * The named lock of an election's term. MySQL 5.7+ allows 64 characters and an election name may
 * have 128, so table and election are hashed.
 */
export function lockName(table: string, election: string, term: number): string {
  const digest = createHash('sha256').update(`${table}\0${election}`).digest('base64url').slice(0, 32);
  return `conclave:${digest}:${term}`;
}
