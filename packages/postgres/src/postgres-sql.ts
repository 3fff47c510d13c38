/**
 * Every SQL statement of the PostgreSQL backend, as pure functions of the table's name. Values
 * are always bound parameters (`$1`, arrays expanded by `unnest`), never SQL text.
 *
 * Time is the server's `clock_timestamp()`, the wall clock at the moment it is read, not `now()`,
 * which is the start of the current transaction (PostgreSQL docs, "Date/Time Functions", "Current
 * Date/Time"): a statement that waited for a row lock would otherwise judge a lease by a time
 * already past. Where one statement tests a lease and sets it, every test and value of a row uses
 * one reading of the clock, so they all see the same instant.
 *
 * `INSERT … ON CONFLICT DO UPDATE` evaluates every SET expression against the row as it was
 * (the existing row by its alias, the proposed one as `excluded`; PostgreSQL docs, "INSERT"), so
 * unlike MySQL the order of the assignments does not matter.
 */

import { ME, ME_CTE, fenceColumns, foreignRow } from './postgres-fence-sql';

/** The table's name as SQL: both parts validated lowercase identifiers (postgres-options.ts), quoted as well. */
export function qualified(table: string, schema: string | null): string {
  return schema === null ? `"${table}"` : `"${schema}"."${table}"`;
}

/** A tombstone (see `tombstoneHolder` in @conclave/core): a holder starting with a space. */
const TOMB = (h: string) => `left(${h}, 1) = ' '`;
/** The tombstone's grace, ms; 0 for any other holder (CASE keeps the cast away from candidate ids). */
const GRACE = (h: string) => `(CASE WHEN ${TOMB(h)} THEN substr(${h}, 2)::bigint ELSE 0 END)`;
const MS = `interval '1 millisecond'`;
/** Time left on a lease, µs, on the server's clock. */
const REMAINING_US = (e: string) => `(extract(epoch FROM (${e} - clock_timestamp())) * 1000000)::bigint`;

/** The same DDL as sql/schema.sql; see there for why each column is what it is. */
export function schemaSql(t: string): string {
  return `CREATE TABLE IF NOT EXISTS ${t} (
  name text COLLATE "C" NOT NULL PRIMARY KEY,
  holder text COLLATE "C" NULL,
  term bigint NOT NULL DEFAULT 0,
  term_floor bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NULL,
  holder_value text NULL,
  term_started_at timestamptz NULL,
  renewed_at timestamptz NULL,
  transitions bigint NOT NULL DEFAULT 0,
  written_by text COLLATE "C" NULL
)`;
}

/** Whether the table has the `written_by` column (tables made before it existed do not). Parameter: the table's name as SQL. */
export const hasWrittenBySql = `SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'written_by' AND NOT attisdropped`;

/** Adds `written_by` to a table made before it existed (NULL in every row: not fenced, see postgres-fence-sql.ts). */
export function addWrittenBySql(t: string): string {
  return `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS written_by text COLLATE "C" NULL`;
}

/**
 * Acquire-or-join for many (election, instance) pairs at once, no election twice (ON CONFLICT
 * cannot touch one row twice in a statement). Parameters: names, instance ids, lease ms,
 * values (null: none). Answers one row per election: `name, holder, term, remaining_us` (µs left
 * on the lease, on the server's clock).
 *
 * First a plain read (`s`, the statement's snapshot) sorts the elections: those whose lease is
 * live and held by another instance (or a tombstone) are answered from that read — no lock, no
 * write, so followers that look again do not queue behind their leader's renewals nor make dead
 * rows; the rest (no row, free or expired, or ours) go through the upsert, which writes each of
 * them, taken or not, so RETURNING reports its row as it is after this statement, with the lock held:
 * - the row is taken only when the lease is free on the server's clock (judged again on the row's
 *   latest version, after the wait for its lock); `term` then goes up by one, above `term_floor`
 *   when a migration raised it, and the term's start is recorded;
 * - a live holder campaigning again keeps its term and gets its lease extended;
 * - an instance adopts, same term, a lease forced to its bare candidate id;
 * - a row another server wrote is fenced instead (postgres-fence-sql.ts): nothing is granted,
 *   and RETURNING reports the fence, a tombstone, so the candidate stays a follower until it ends.
 * Skipping a row never grants anything: a lease seen live in the snapshot was live when read,
 * and a follower told so looks again at its end, or at once when a release wakes it.
 */
export function campaignSql(t: string): string {
  // The instant the conflicting rows are judged at: read once, when the first of them is
  // updated, i.e. after the wait for its row lock (a MATERIALIZED CTE is computed once, on first
  // use). Later rows of the batch see this same instant, a little early for them: a lease is then
  // judged live a little longer and granted from a little earlier, never the other way round.
  const now = `(SELECT now FROM c)`;
  // A row another server wrote is fenced, never granted nor extended (postgres-fence-sql.ts).
  const fenced = foreignRow('l');
  const fence = fenceColumns('l', now, '(excluded.expires_at - excluded.renewed_at)');
  const free = `(l.holder IS NULL OR l.expires_at IS NULL OR l.expires_at <= ${now})`;
  // An instance id is "<candidate> <nonce>" and a candidate id holds no space, so the instance's
  // bare candidate id is the part before the first space.
  const ours = `(${free} OR l.holder = excluded.holder OR l.holder = split_part(excluded.holder, ' ', 1))`;
  // The lease asked for travels in the proposed row as expires_at - renewed_at.
  const ends = `${now} + (excluded.expires_at - excluded.renewed_at)`;
  // Held by somebody else in the snapshot: a live lease (or tombstone) not ours nor our bare id,
  // on a row this server wrote (a foreign row goes to the upsert, to be fenced).
  const other = `(l.holder IS NOT NULL AND l.expires_at > r.now AND l.holder <> r.holder AND l.holder <> split_part(r.holder, ' ', 1) AND NOT ${foreignRow('l')})`;
  return `WITH ${ME_CTE}, r AS (
  SELECT name, holder, lease_ms, value, clock_timestamp() AS now
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS r(name, holder, lease_ms, value)
), s AS (
  SELECT r.name, r.holder, r.lease_ms, r.value, r.now, l.holder AS current, l.term, l.expires_at,
    coalesce(${other}, false) AS other
  FROM r LEFT JOIN ${t} AS l ON l.name = r.name
), c AS MATERIALIZED (SELECT clock_timestamp() AS now),
i AS (
  INSERT INTO ${t} AS l (name, holder, term, expires_at, holder_value, term_started_at, renewed_at, transitions, written_by)
  SELECT name, holder, 1, now + lease_ms * ${MS}, value, now, now, 1, ${ME} FROM s WHERE NOT other
  -- One order of rows in every process (byte order, as the table's names): two batches locking
  -- overlapping rows in opposite orders could deadlock (40P01, reported BACKEND_UNAVAILABLE and retried).
  ORDER BY name COLLATE "C"
  ON CONFLICT (name) DO UPDATE SET
    term = CASE WHEN ${fenced} THEN l.term WHEN ${free} THEN greatest(l.term, l.term_floor) + 1 ELSE l.term END,
    term_floor = CASE WHEN ${fenced} THEN ${fence.termFloor} ELSE l.term_floor END,
    transitions = CASE WHEN ${fenced} THEN l.transitions WHEN ${free} THEN l.transitions + 1 ELSE l.transitions END,
    term_started_at = CASE WHEN ${fenced} THEN l.term_started_at WHEN ${free} THEN ${now} ELSE l.term_started_at END,
    renewed_at = CASE WHEN ${fenced} THEN l.renewed_at WHEN ${ours} THEN ${now} ELSE l.renewed_at END,
    holder_value = CASE WHEN ${fenced} THEN l.holder_value WHEN ${ours} THEN excluded.holder_value ELSE l.holder_value END,
    holder = CASE WHEN ${fenced} THEN ${fence.holder} WHEN ${ours} THEN excluded.holder ELSE l.holder END,
    expires_at = CASE WHEN ${fenced} THEN ${fence.expiresAt} WHEN ${ours} THEN ${ends} ELSE l.expires_at END,
    written_by = CASE WHEN ${fenced} THEN ${fence.writtenBy} WHEN ${ours} THEN ${ME} ELSE l.written_by END
  RETURNING l.name, l.holder, l.term, ${REMAINING_US('l.expires_at')} AS remaining_us
)
SELECT name, holder, term, remaining_us FROM i
UNION ALL
SELECT name, current, term, ${REMAINING_US('expires_at')} FROM s WHERE other`;
}

/**
 * Extends many leases at once (batched renewal): only rows whose holder and term are still the
 * ones asked for and whose lease has not run out, and that no other server wrote (those are
 * fenced instead, whoever holds them: postgres-fence-sql.ts). Never creates a row or a lease. The clock is
 * read once, before any row lock is waited for: a row that changed meanwhile is tested again
 * (holder and term) against its new version, so an earlier instant can only grant a lease from
 * a little earlier, never extend one that another candidate took. Parameters:
 * names, instance ids, tokens, lease ms.
 *
 * The answer is short whatever the batch: first one row with `renewed`, how many rows were
 * extended (its other columns NULL), then one row per request that was *not* renewed, with the
 * row's holder as the statement's snapshot saw it (`current`, NULL when no lease is live). A
 * leader of N elections so reads one row per interval, not N; the caller checks that
 * `renewed` and the refusals account for every request.
 *
 * The requests not renewed are the requests EXCEPT the rows updated, a set operation (hashed or
 * sorted, whatever the estimates), not an anti-join: the planner estimates the UPDATE's rows at 1
 * (the product of four selectivities), and a nested-loop anti-join over 10 000 requests that it
 * may then choose compares every request with every renewed row (seconds, and every lease of
 * the batch lost).
 */
export function renewSql(t: string): string {
  const fence = fenceColumns('l', 'n.now', `r.lease_ms * ${MS}`);
  const fenced = foreignRow('l');
  const renewal = `(l.holder = r.holder AND l.term = r.term AND l.expires_at > n.now)`;
  return `WITH ${ME_CTE}, r AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, holder, term, lease_ms)
), u AS (
  UPDATE ${t} AS l SET
    renewed_at = CASE WHEN ${fenced} THEN l.renewed_at ELSE n.now END,
    expires_at = CASE WHEN ${fenced} THEN ${fence.expiresAt} ELSE n.now + r.lease_ms * ${MS} END,
    holder = CASE WHEN ${fenced} THEN ${fence.holder} ELSE l.holder END,
    term_floor = CASE WHEN ${fenced} THEN ${fence.termFloor} ELSE l.term_floor END,
    written_by = ${ME}
  FROM r, (SELECT clock_timestamp() AS now) n
  WHERE l.name = r.name AND (${renewal} OR ${fenced})
  -- A fenced row's holder is the tombstone, never an instance id: it is not renewed.
  RETURNING l.name, l.holder, l.term, l.holder = r.holder AS renewed
), x AS (
  SELECT name COLLATE "C" AS name, holder COLLATE "C" AS holder, term FROM r
  EXCEPT
  SELECT name, holder, term FROM u WHERE renewed
)
SELECT NULL::text AS name, NULL::text AS asked, NULL::bigint AS token, NULL::text AS current, (SELECT count(*) FROM u WHERE renewed) AS renewed
UNION ALL
-- The table as the statement's snapshot saw it, unless this statement fenced the row.
SELECT x.name, x.holder, x.term, CASE WHEN f.name IS NOT NULL THEN f.holder WHEN c.expires_at > clock_timestamp() THEN c.holder END, NULL
FROM x LEFT JOIN ${t} c ON c.name = x.name LEFT JOIN u f ON f.name = x.name AND NOT f.renewed`;
}

/**
 * Gives leases up, many at once (the releases of one turn), each only if its instance holds it:
 * with a token only that term, without one but with a bound only a term no greater.
 * Parameters: names, instance ids, tokens (null: any), bounds (null: none), the wake-up channel.
 * The row stays with its term (a DELETE would restart the tokens at 1). The rows are locked
 * first, in the order every campaign locks them (`k`, re-checked on each row's latest version),
 * so a batch of releases and a batch of campaigns never deadlock. Followers are woken
 * (`pg_notify`, delivered when the statement commits, so they find the lease free) on the
 * channel; a null channel wakes nobody.
 */
export function releaseSql(t: string): string {
  return `WITH r AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, holder, token, not_above)
), k AS (
  SELECT l.name FROM ${t} AS l JOIN r ON l.name = r.name AND l.holder = r.holder
    AND (r.token IS NULL OR l.term = r.token) AND (r.not_above IS NULL OR l.term <= r.not_above)
  ORDER BY l.name FOR UPDATE OF l
), u AS (
  UPDATE ${t} AS l SET holder = NULL, expires_at = NULL FROM k WHERE l.name = k.name RETURNING l.name
)
SELECT name, CASE WHEN $5::text IS NOT NULL THEN pg_notify($5::text, name) END AS notified FROM u`;
}

/**
 * Admin revocation (clearLeader, first step of forceLeader): a live lease becomes a tombstone
 * that keeps its term and lives `$2` ms past the lease's end, so its holder's renewals are
 * refused and campaigns stay followers until then; a tombstone already there (another admin's)
 * is made to live `$2` ms past the end of the lease it revoked, if it would not. `$3` is the
 * tombstone's holder, `$4` the wake-up channel (or null), `$5` a candidate whose lease (bare or
 * any instance of it) is left alone (or null), `$6` the lease the admin would install, ms. A row
 * another server wrote is fenced first (postgres-fence-sql.ts), then revoked like any
 * tombstone: `$2` ms past the fence's end.
 */
export function revokeSql(t: string): string {
  const fenced = foreignRow('r');
  const fence = fenceColumns('r', 'n.now', `$6 * ${MS}`);
  return `WITH ${ME_CTE}, u AS (
  UPDATE ${t} AS r SET
    expires_at = CASE WHEN ${fenced} THEN ${fence.expiresAt} + $2 * ${MS}
      WHEN ${TOMB('r.holder')} THEN r.expires_at + ($2 - ${GRACE('r.holder')}) * ${MS} ELSE r.expires_at + $2 * ${MS} END,
    holder = $3,
    term_floor = CASE WHEN ${fenced} THEN ${fence.termFloor} ELSE r.term_floor END,
    written_by = ${ME}
  FROM (SELECT clock_timestamp() AS now) n
  WHERE r.name = $1 AND (${fenced} OR (r.holder IS NOT NULL AND r.expires_at > n.now AND (
    (NOT ${TOMB('r.holder')} AND ($5::text IS NULL OR (r.holder <> $5 AND split_part(r.holder, ' ', 1) <> $5)))
    OR (${TOMB('r.holder')} AND ${GRACE('r.holder')} < $2))))
  RETURNING r.name
)
SELECT name, CASE WHEN $4::text IS NOT NULL THEN pg_notify($4::text, name) END AS notified FROM u`;
}

/** The row of one election, with the time left on the server's clock (µs). */
export function readRowSql(t: string): string {
  return `SELECT name, holder, term, ${REMAINING_US('expires_at')} AS remaining_us FROM ${t} WHERE name = $1`;
}

/**
 * Admin force, second step: `$2` leads in a new term, only if the lease is free or a tombstone
 * whose revoked lease has ended on the server's clock; answers the new term, or no row. Never a
 * DELETE + INSERT (the term would restart): the new term is above every earlier one and the
 * floor. Wakes followers on `$4` (or nobody when null), so the forced candidate adopts at once.
 * A row another server wrote is fenced instead (postgres-fence-sql.ts): no row, and the next
 * attempt waits for the fence.
 */
export function installSql(t: string): string {
  const free = `(l.holder IS NULL OR l.expires_at IS NULL OR l.expires_at <= excluded.renewed_at)`;
  const ended = `(${TOMB('l.holder')} AND l.expires_at - ${GRACE('l.holder')} * ${MS} <= excluded.renewed_at)`;
  const fenced = foreignRow('l');
  const fence = fenceColumns('l', 'excluded.renewed_at', `$3 * ${MS}`);
  const unlessFenced = (column: string, value: string) => `${column} = CASE WHEN ${fenced} THEN l.${column} ELSE ${value} END`;
  return `WITH ${ME_CTE}, i AS (
  INSERT INTO ${t} AS l (name, holder, term, expires_at, term_started_at, renewed_at, transitions, written_by)
  SELECT $1, $2, 1, now + $3 * ${MS}, now, now, 1, ${ME} FROM (SELECT clock_timestamp() AS now) n
  ON CONFLICT (name) DO UPDATE SET
    ${unlessFenced('term', 'greatest(l.term, l.term_floor) + 1')},
    ${unlessFenced('transitions', 'l.transitions + 1')},
    ${unlessFenced('term_started_at', 'excluded.renewed_at')},
    ${unlessFenced('renewed_at', 'excluded.renewed_at')},
    ${unlessFenced('holder_value', 'NULL')},
    holder = CASE WHEN ${fenced} THEN ${fence.holder} ELSE excluded.holder END,
    expires_at = CASE WHEN ${fenced} THEN ${fence.expiresAt} ELSE excluded.expires_at END,
    term_floor = CASE WHEN ${fenced} THEN ${fence.termFloor} ELSE l.term_floor END,
    written_by = ${ME}
  WHERE ${free} OR ${ended} OR ${fenced}
  RETURNING l.name, l.term, l.holder
)
SELECT term, CASE WHEN $4::text IS NOT NULL THEN pg_notify($4::text, name) END AS notified FROM i WHERE holder = $2`;
}

/**
 * Makes the next term's token greater than `$2` without touching the current term (whose holder
 * renews by its token): the floor is kept beside the term and applied when the row next changes
 * hands. Creates the row if the election has none yet.
 */
export function raiseFloorSql(t: string): string {
  return `WITH ${ME_CTE}
INSERT INTO ${t} AS l (name, holder, term, term_floor, expires_at, written_by) SELECT $1, NULL, 0, $2, NULL, ${ME}
ON CONFLICT (name) DO UPDATE SET term_floor = greatest(l.term_floor, excluded.term_floor)`;
}

/** A timestamptz as ms since the Unix epoch. */
const epochMs = (c: string) => `floor(extract(epoch FROM ${c}) * 1000)::bigint`;

/** Who leads, only while the lease is live on the server and not revoked, with the leader metadata. */
export function leaderSql(t: string): string {
  return `SELECT holder, term, holder_value, transitions, ${epochMs('term_started_at')} AS since_ms,
  ${epochMs('renewed_at')} AS renewed_ms, ${epochMs('expires_at')} AS ends_ms
FROM ${t} WHERE name = $1 AND holder IS NOT NULL AND NOT ${TOMB('holder')} AND expires_at > clock_timestamp()`;
}
