/**
 * The lease row of the SQL backends: one row per election naming its holder, its term (the
 * fencing token) and the time its lease has left on the server's clock. What a statement's rows
 * mean is the same on every such store; only the SQL that produces them differs.
 */

import type { CampaignResult, LeaderInfo } from './backend';
import { candidateOf } from './instance-id';
import { isTombstone, tombstoneLookAgainMs } from './revocation';

/** One election's lease as a statement reports it (columns `name, holder, term, remaining_us`). */
export interface LeaseRow {
  holder: string | null;
  term: number;
  /** Time left on the server's clock, µs; null when released or cleared. */
  remainingUs: number | null;
}

/** A lease row whose lease is still running on the server's clock. */
export type LiveLeaseRow = LeaseRow & { holder: string; remainingUs: number };

/** Rows with `name, holder, term, remaining_us` (numbers or the strings drivers give bigints as), by election. */
export function leaseRowsByName(rows: unknown): Map<string, LeaseRow> {
  const out = new Map<string, LeaseRow>();
  for (const r of (rows ?? []) as ReadonlyArray<Record<string, unknown>>) {
    out.set(String(r.name), {
      holder: r.holder === null || r.holder === undefined ? null : String(r.holder),
      term: Number(r.term),
      remainingUs: numberOrNull(r.remaining_us),
    });
  }
  return out;
}

/** Whether `row` is a lease live on the server's clock. */
export function isLiveLease(row: LeaseRow | undefined): row is LiveLeaseRow {
  return row !== undefined && row.holder !== null && row.remainingUs !== null && row.remainingUs > 0;
}

/**
 * Whether `row` is a live lease (or a revocation's tombstone) that a campaign by `candidateId` —
 * an instance id, or a bare candidate id — cannot take: it names neither that instance nor its
 * bare candidate id. A campaign's write would change nothing on such a row.
 */
export function heldByAnother(row: LeaseRow | undefined, candidateId: string): row is LiveLeaseRow {
  return isLiveLease(row) && row.holder !== candidateId && row.holder !== candidateOf(candidateId);
}

/**
 * What a campaign by `candidateId` learns from its election's row read after the campaign's write:
 * leader when the live lease names it; otherwise who leads and when to look again (a revoked
 * lease — a tombstone — has no leader until it could have ended).
 */
export function campaignOutcome(row: LeaseRow | undefined, candidateId: string, leaseMs: number): CampaignResult {
  if (!isLiveLease(row)) return { role: 'follower', leaderId: null, token: null };
  if (row.holder === candidateId) return { role: 'leader', token: row.term, leaseMs };
  const remainingMs = Math.ceil(row.remainingUs / 1000);
  if (isTombstone(row.holder)) return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: tombstoneLookAgainMs(row.holder, remainingMs) };
  return { role: 'follower', leaderId: row.holder, token: row.term, leaseRemainingMs: remainingMs };
}

/**
 * A leader row (`holder, term, holder_value, since_ms, renewed_ms, ends_ms, transitions`) as
 * `LeaderInfo`; a NULL column (not known) leaves its field out, and a `transitions` of 0 (the
 * term started before the column existed) too.
 */
export function leaderInfoFromRow(row: Record<string, unknown>): LeaderInfo {
  const info: LeaderInfo = { candidateId: candidateOf(String(row.holder)), token: Number(row.term) };
  const value = row.holder_value;
  if (value !== null && value !== undefined) info.value = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  const since = numberOrNull(row.since_ms);
  const renewedAt = numberOrNull(row.renewed_ms);
  const leaseEndsAt = numberOrNull(row.ends_ms);
  if (since !== null) info.since = since;
  if (renewedAt !== null) info.renewedAt = renewedAt;
  if (leaseEndsAt !== null) info.leaseEndsAt = leaseEndsAt;
  const transitions = Number(row.transitions);
  if (transitions > 0) info.transitions = transitions;
  return info;
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
