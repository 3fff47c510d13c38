/**
 * Every SQL statement of the MySQL backend, as pure functions of their inputs.
 *
 * Compatibility (MySQL 5.7, 8.0, 8.4; MariaDB 10.6+):
 * - Time is the server's `UTC_TIMESTAMP(3)`: millisecond precision like `NOW(3)`, but independent
 *   of each session's `time_zone` and of daylight-saving jumps, so sessions configured
 *   differently, and a DST change during a lease, compare the same instants (the seeds' `now()`
 *   and `TIMESTAMP` had second precision and the session's zone). It is evaluated once per
 *   statement, so every row of a batch sees the same "now".
 * - No `VALUES(col)` in `ON DUPLICATE KEY UPDATE` (deprecated since MySQL 8.0.20) and no
 *   `AS new` row alias (MySQL 8.0.19+ only, unknown to MariaDB and 5.7): the candidate id and
 *   lease are bound a second time in the UPDATE part, which every version accepts.
 * - No `RETURNING` (MariaDB only): outcomes are read back by a `SELECT` sent in the same query
 *   (see `campaignScript`).
 */

import { candidateOf } from '@conclave/core';

/** A value that goes into SQL: strings as hex literals, numbers as safe integers. */
export type SqlValue = string | number;

/**
 * Renders `?` placeholders. This is conclave's parameter binding: values never become SQL text.
 * Strings go as hex literals (`X'6e6f6465'`): unlike quoted-and-escaped strings, they cannot be
 * misread under `NO_BACKSLASH_ESCAPES` or a multi-byte connection charset, so an id such as
 * `x');DROP TABLE t;--` stays data in every session. Numbers must be safe integers.
 */
export function bind(sql: string, values: readonly SqlValue[]): string {
  let i = 0;
  const out = sql.replace(/\?/g, () => {
    if (i >= values.length) throw new Error(`bind: more placeholders than values in ${sql}`);
    return literal(values[i++]!);
  });
  if (i !== values.length) throw new Error(`bind: ${values.length} values for ${i} placeholders`);
  return out;
}

export function literal(value: SqlValue): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`bind: ${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value !== 'string') throw new Error(`bind: unsupported value of type ${typeof value}`);
  // The hex literal is a binary string; compared with the ascii_bin columns it compares bytes,
  // which is what we want. An empty string needs the special form X''.
  return `X'${Buffer.from(value, 'utf8').toString('hex')}'`;
}

/** `table` has been validated as a plain identifier (mysql-options.ts); quoting is belt and braces. */
function q(table: string): string {
  return `\`${table}\``;
}

const NOW = 'UTC_TIMESTAMP(3)';
/** The lease is free: released/cleared (holder NULL) or expired on the server's clock. */
const FREE = `(holder IS NULL OR expires_at IS NULL OR expires_at <= ${NOW})`;

/** The same DDL as sql/schema.sql; see there for why each column is what it is. */
export function schemaSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${q(table)} (
  \`name\` VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'election name',
  \`holder\` VARCHAR(240) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'instance id (candidate id, space, nonce) or forced candidate id of the lease holder; NULL when released or cleared',
  \`term\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fencing token: +1 whenever the lease changes hands',
  \`term_floor\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the next term is above this (raiseTokenFloor, for migrations)',
  \`expires_at\` DATETIME(3) NULL COMMENT 'lease end, UTC, server clock (UTC_TIMESTAMP(3))',
  PRIMARY KEY (\`name\`)
) ENGINE=InnoDB COMMENT='conclave leader election leases'`;
}

export interface CampaignGroup {
  candidateId: string;
  leaseMs: number;
  elections: string[];
}

/**
 * Acquire-or-join for one candidate in many elections: seeds 000–002's atomic upsert, one row per
 * election, kept; what they got wrong, fixed:
 * - the row is taken only when the lease is free on the server's clock, renewed only for its
 *   holder (the seeds' `IF(last_seen_active < now() - INTERVAL ? SECOND, …)`), in ms;
 * - `term` goes up by one exactly when the row changes hands (new term ⇒ new fencing token),
 *   and above `term_floor` when a migration raised it (see `raiseFloorSql`);
 *   a live holder campaigning again keeps its term and gets its lease extended;
 * - an instance id (`"<candidate> <nonce>"`) adopts, same term, a lease forced to its bare
 *   candidate id (`holder = candidate`), so two instances of one candidate never share a term.
 *
 * The order of the assignments matters. MySQL evaluates them left to right, each seeing the
 * columns already assigned; MariaDB does the same unless `SIMULTANEOUS_ASSIGNMENT` is set, then
 * each sees the old row. `term` and `holder` come first and read only columns not yet assigned
 * (`holder`, `expires_at`). `expires_at` reads `holder`, which differs between the two modes,
 * but its condition (`holder` is us or our bare candidate id, or the lease was free) is true in
 * both exactly when we now hold the lease: left to right, `holder` is us iff we were the holder,
 * adopted a forced lease or took the free row; simultaneously, the old `holder` is us or our
 * candidate id, or the old lease was free. Same answer either way.
 */
export function campaignSql(table: string, group: CampaignGroup): string {
  const rows = group.elections.map(() => `(?, ?, 1, ${NOW} + INTERVAL ? MICROSECOND)`).join(', ');
  const values: SqlValue[] = [];
  const leaseUs = group.leaseMs * 1000;
  for (const election of group.elections) values.push(election, group.candidateId, leaseUs);
  const candidate = candidateOf(group.candidateId);
  values.push(candidate, group.candidateId, group.candidateId, candidate, leaseUs);
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, expires_at) VALUES ${rows}
ON DUPLICATE KEY UPDATE
  term = IF(${FREE}, GREATEST(term, term_floor) + 1, term),
  holder = IF(${FREE} OR holder = ?, ?, holder),
  expires_at = IF(holder = ? OR holder = ? OR ${FREE}, ${NOW} + INTERVAL ? MICROSECOND, expires_at)`,
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
    `UPDATE ${q(table)} SET expires_at = ${NOW} + INTERVAL ? MICROSECOND
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
 * Gives the lease up, only if `candidateId` holds it (and, with a token, only that term).
 * The seeds `DELETE … WHERE name=? AND node=?`; deleting would also delete the term, and the next
 * leader would start again at token 1. The row stays with `holder` NULL.
 */
export function releaseSql(table: string, election: string, candidateId: string, token: number | null): string {
  return token === null
    ? bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ?`, [election, candidateId])
    : bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ? AND term = ?`, [
        election,
        candidateId,
        token,
      ]);
}

/** Admin clear (seed 000's `DELETE FROM … WHERE name=?`), keeping the term for the next leader. */
export function clearSql(table: string, election: string): string {
  return bind(`UPDATE ${q(table)} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder IS NOT NULL`, [election]);
}

/**
 * Admin force (seed 000's `REPLACE INTO`). REPLACE deletes and re-inserts, which would reset the
 * term; this upsert starts a new term on the existing row instead. `LAST_INSERT_ID(expr)` puts the
 * new term in the OK packet's insert id, so the token is known from this one statement even if
 * another admin forces again right after (a read-back could see theirs).
 */
export function forceSql(table: string, election: string, candidateId: string, leaseMs: number): string {
  const leaseUs = leaseMs * 1000;
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, expires_at) VALUES (?, ?, LAST_INSERT_ID(1), ${NOW} + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE
  term = LAST_INSERT_ID(GREATEST(term, term_floor) + 1),
  holder = ?,
  expires_at = ${NOW} + INTERVAL ? MICROSECOND`,
    [election, candidateId, leaseUs, candidateId, leaseUs],
  );
}

/**
 * Makes the next term's token greater than `floor` without touching the current term (whose
 * holder renews by its token): the floor is kept beside the term and applied when the row next
 * changes hands. Creates the row if the election has none yet.
 */
export function raiseFloorSql(table: string, election: string, floor: number): string {
  return bind(
    `INSERT INTO ${q(table)} (name, holder, term, term_floor, expires_at) VALUES (?, NULL, 0, ?, NULL)
ON DUPLICATE KEY UPDATE term_floor = GREATEST(term_floor, ?)`,
    [election, floor, floor],
  );
}

/** Who leads (seed 000's `select node as leader …`), only while the lease is live on the server. */
export function leaderSql(table: string, election: string): string {
  return bind(
    `SELECT holder, term FROM ${q(table)} WHERE name = ? AND holder IS NOT NULL AND expires_at > ${NOW}`,
    [election],
  );
}

/** A named-lock name for a term: ≤ 64 characters as MySQL 5.7+ requires, whatever the election's length. */
export function lockName(digest: string, term: number): string {
  return `conclave:${digest}:${term}`;
}
