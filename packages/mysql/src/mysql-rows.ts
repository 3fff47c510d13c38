/** The rows the statements of mysql-sql.ts return, read into lease rows and `LeaderInfo`. */

import { candidateOf, type LeaderInfo } from '@conclave/core';

/** One election's lease as the read-back SELECT reports it. */
export interface LeaseRow {
  holder: string | null;
  term: number;
  /** Time left on the server's clock, µs; null when released or cleared. */
  remainingUs: number | null;
}

/** The read-back rows of `readRowsSql`, by election. */
export function toRows(result: unknown): Map<string, LeaseRow> {
  const rows = new Map<string, LeaseRow>();
  for (const r of (result ?? []) as Array<Record<string, unknown>>) {
    rows.set(String(r.name), {
      holder: r.holder === null || r.holder === undefined ? null : String(r.holder),
      term: Number(r.term),
      remainingUs: r.remaining_us === null || r.remaining_us === undefined ? null : Number(r.remaining_us),
    });
  }
  return rows;
}

/** A `leaderSql` row as `LeaderInfo`; a NULL column (not known) leaves its field out. */
export function leaderInfo(row: Record<string, unknown>): LeaderInfo {
  const info: LeaderInfo = { candidateId: candidateOf(String(row.holder)), token: Number(row.term) };
  if (row.holder_value !== null && row.holder_value !== undefined) {
    info.value = Buffer.isBuffer(row.holder_value) ? row.holder_value.toString('utf8') : String(row.holder_value);
  }
  const ms = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));
  const since = ms(row.since_ms);
  const renewedAt = ms(row.renewed_ms);
  const leaseEndsAt = ms(row.ends_ms);
  if (since !== undefined) info.since = since;
  if (renewedAt !== undefined) info.renewedAt = renewedAt;
  if (leaseEndsAt !== undefined) info.leaseEndsAt = leaseEndsAt;
  // 0: the term started before the column existed, so its count is not known.
  const transitions = Number(row.transitions);
  if (transitions > 0) info.transitions = transitions;
  return info;
}
