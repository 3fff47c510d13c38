import { candidateOf, isTombstone, type CampaignResult, type LeaderInfo, type RenewResult } from '@conclave/core/spi';
import type { ElectionKeys } from './redis-keys';

/**
 * What one mode (one master, or a Redlock quorum) does for the backend. Names and options are
 * validated by `RedisBackend` before these are called.
 */
export interface LeaseOps {
  /**
   * `value`: published with the candidacy, undefined when none. `candidateTtlMs`: how long the
   * candidate stays listed, when not the usual `candidateTtlMs(leaseMs)` (a quiet follower, which
   * campaigns seldom). A follower's answer may carry `holderLeaseMs`, the length of the holder's
   * last take or renewal (one master only), which the backend takes off before answering.
   */
  campaign(
    keys: ElectionKeys,
    election: string,
    candidateId: string,
    leaseMs: number,
    value: string | undefined,
    candidateTtlMs?: number,
  ): Promise<CampaignResult & { holderLeaseMs?: number }>;
  renew(keys: ElectionKeys, election: string, candidateId: string, token: number, leaseMs: number): Promise<RenewResult>;
  release(keys: ElectionKeys, election: string, candidateId: string, token: number | null): Promise<void>;
  getLeader(keys: ElectionKeys, election: string): Promise<LeaderInfo | null>;
  forceLeader(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number): Promise<LeaderInfo>;
  clearLeader(keys: ElectionKeys, election: string): Promise<void>;
  listCandidates(keys: ElectionKeys, election: string): Promise<string[]>;
  raiseTokenFloor(keys: ElectionKeys, election: string, token: number): Promise<void>;
}

/** How long a candidate stays listed after its last campaign or renewal, for a given lease. */
export function candidateTtlMs(leaseMs: number): number {
  return 3 * leaseMs;
}

/**
 * How long a quiet follower (one told of renewals by keyspace events, which sends nothing while
 * they come) stays listed after its last campaign: it campaigns again halfway through, so the
 * longer this is, the less a follower sends, and the longer a dead one stays listed.
 */
export function quietCandidateTtlMs(leaseMs: number): number {
  return Math.max(candidateTtlMs(leaseMs), 60_000);
}

/** A token as the scripts return it (decimal string); '0' means "not committed yet". */
export function parseToken(value: unknown): number | null {
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** `{holder, id1, score1, …}` from the CANDIDATES script → holder and (id, score) pairs. */
export function parseCandidates(reply: unknown): { holder: string | null; seen: Array<[string, number]> } {
  const list = Array.isArray(reply) ? (reply as unknown[]).map(String) : [];
  const seen: Array<[string, number]> = [];
  for (let i = 1; i + 1 < list.length; i += 2) seen.push([list[i]!, Number(list[i + 1])]);
  return { holder: list[0] ? list[0] : null, seen };
}

/** Leader first, then the others by when they would be forgotten (least recently seen first). */
export function orderCandidates(holder: string | null, seen: Iterable<[string, number]>): string[] {
  const others = [...seen]
    .filter(([id]) => id !== holder)
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
    .map(([id]) => id);
  return holder ? [holder, ...others] : others;
}

/** The CAMPAIGN script's value argument: '' for none, else '=' and the value (so '' can be a value). */
export function valueArg(value: string | undefined): string {
  return value === undefined ? '' : `=${value}`;
}

/** One master's LEADER reply. */
export interface LeaderReply {
  holder: string;
  token: number;
  /** The master's clock when it answered, ms epoch. */
  now: number;
  /** Time left on the lease, ms. */
  pttl: number;
  value: string | null;
  since: number | null;
  renewed: number | null;
}

/** A LEADER reply, or null when nobody holds a live lease (or a tombstone stands). */
export function parseLeader(reply: unknown): LeaderReply | null {
  const v = Array.isArray(reply) ? (reply as unknown[]) : [];
  const token = parseToken(v[1]);
  if (typeof v[0] !== 'string' || !v[0] || isTombstone(v[0]) || token === null) return null;
  const ms = (x: unknown) => (typeof x === 'string' && /^\d+$/.test(x) ? Number(x) : null);
  return {
    holder: v[0],
    token,
    pttl: Number(v[2]),
    now: Number(v[3]),
    value: typeof v[4] === 'string' ? v[4] : null,
    since: ms(v[5]),
    renewed: ms(v[6]),
  };
}

/** `LeaderInfo` from one master's reply; a field the master does not have is left out. */
export function leaderInfoOf(r: LeaderReply): LeaderInfo {
  return {
    candidateId: candidateOf(r.holder),
    token: r.token,
    ...(r.value === null ? {} : { value: r.value }),
    ...(r.since === null ? {} : { since: r.since }),
    ...(r.renewed === null ? {} : { renewedAt: r.renewed }),
    ...(r.pttl >= 0 && Number.isSafeInteger(r.now) ? { leaseEndsAt: r.now + r.pttl } : {}),
  };
}
