import type { CampaignResult, LeaderInfo, RenewResult } from '@conclave/core';
import type { ElectionKeys } from './redis-keys';

/**
 * What one mode (one master, or a Redlock quorum) does for the backend. Names and options are
 * validated by `RedisBackend` before these are called.
 */
export interface LeaseOps {
  campaign(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number): Promise<CampaignResult>;
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
