/** The rows the statements of postgres-sql.ts return, read into lease rows and `LeaderInfo`. */

import { candidateOf, type LeaderInfo } from '@conclave/core';

/** One election's lease as a statement reports it. */
export interface LeaseRow {
  holder: string | null;
  term: number;
  /** Time left on the server's clock, µs; null when released. */
  remainingUs: number | null;
}

/** `pg` hands bigint columns over as strings; they hold safe integers here. */
function num(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Rows with `name, holder, term, remaining_us`, by election. */
export function toRows(rows: ReadonlyArray<Record<string, unknown>>): Map<string, LeaseRow> {
  const out = new Map<string, LeaseRow>();
  for (const r of rows) {
    out.set(String(r.name), {
      holder: r.holder === null || r.holder === undefined ? null : String(r.holder),
      term: Number(r.term),
      remainingUs: num(r.remaining_us),
    });
  }
  return out;
}

/** Whether a row is a lease live on the server's clock. */
export function isLive(row: LeaseRow | undefined): row is LeaseRow & { holder: string; remainingUs: number } {
  return row !== undefined && row.holder !== null && row.remainingUs !== null && row.remainingUs > 0;
}

/** A `leaderSql` row as `LeaderInfo`; a NULL column (not known) leaves its field out. */
export function leaderInfo(row: Record<string, unknown>): LeaderInfo {
  const info: LeaderInfo = { candidateId: candidateOf(String(row.holder)), token: Number(row.term) };
  if (row.holder_value !== null && row.holder_value !== undefined) info.value = String(row.holder_value);
  const since = num(row.since_ms);
  const renewedAt = num(row.renewed_ms);
  const leaseEndsAt = num(row.ends_ms);
  if (since !== null) info.since = since;
  if (renewedAt !== null) info.renewedAt = renewedAt;
  if (leaseEndsAt !== null) info.leaseEndsAt = leaseEndsAt;
  const transitions = Number(row.transitions);
  if (transitions > 0) info.transitions = transitions;
  return info;
}
