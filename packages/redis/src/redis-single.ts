import {
  candidateOf,
  forceAfterRevocation,
  isTombstone,
  tombstoneLookAgainMs,
  type CampaignResult,
  type LeaderInfo,
  type RenewResult,
  type Revocation,
} from '@conclave/core/spi';
import type { ElectionKeys } from './redis-keys';
import { candidateTtlMs, leaderInfoOf, orderCandidates, parseCandidates, parseLeader, parseToken, valueArg, type LeaseOps } from './redis-lease-ops';
import type { RedisNode } from './redis-node';
import type { ResolvedRedisOptions } from './redis-options';
import { CAMPAIGN, CANDIDATES, FLOOR, INSTALL, LEADER, RELEASE, RENEW, RENEW_MANY, REVOKE } from './redis-scripts';

/** Whether a script's reply code (its first element) is one of `codes`: a write that must reach the replicas. */
function grants(reply: unknown, ...codes: number[]): boolean {
  return Array.isArray(reply) ? codes.includes(Number(reply[0])) : codes.includes(Number(reply));
}

/**
 * One master: every operation is one Lua script, so it is atomic on the server and costs one
 * round trip (shared with every other call of the same turn). The fencing token is the term
 * counter INCRemented by the acquiring script itself (raised to the server's ms clock when
 * `tokenClockFloor`), so a new term's token is greater than every earlier one as long as the
 * counter key survives — or, with the clock floor, as long as the server clock does not go back.
 * With replicas, a write that grants or keeps a lease counts once they acknowledge it (`WAIT`, see
 * `RedisBackendOptions.minReplicas`), so the replica Sentinel promotes holds every term that led.
 */
export class SingleLeaseOps implements LeaseOps {
  constructor(
    private readonly node: RedisNode,
    private readonly options: ResolvedRedisOptions,
  ) {}

  async campaign(
    keys: ElectionKeys,
    election: string,
    candidateId: string,
    leaseMs: number,
    value: string | undefined,
    candidateTtlMs?: number,
  ): Promise<CampaignResult & { holderLeaseMs?: number }> {
    const reply = (await this.node.run({
      script: CAMPAIGN,
      keys: [keys.lease, keys.term, keys.candidates, keys.epoch],
      args: [
        candidateId,
        leaseMs,
        this.options.trackCandidates ? (candidateTtlMs ?? this.cttl(leaseMs)) : 0,
        '1',
        this.options.tokenClockFloor ? '1' : '0',
        candidateOf(candidateId),
        this.options.publish ? keys.elected : '',
        valueArg(value),
      ],
      election,
      acknowledge: { what: 'new term or extended lease', leaseMs, needed: (r) => grants(r, 1, 2) },
    })) as [number, string, string, string | number, (string | null)?];
    if (reply[0] === 3) {
      // Restart fence: nobody leads; look again when it ends.
      return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: Math.max(0, Number(reply[1])) };
    }
    if (reply[0] !== 0) {
      // SET … PX on the server starts the lease when the request arrives, which is after it was
      // sent: the whole leaseMs counts from the send.
      return { role: 'leader', token: Number(reply[1]), leaseMs };
    }
    const pttl = Number(reply[3]);
    if (isTombstone(reply[1])) {
      // A revoked lease: nobody leads until it could have ended.
      return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: tombstoneLookAgainMs(reply[1], Math.max(0, pttl)) };
    }
    const holderLeaseMs = Number(reply[4] ?? NaN);
    return {
      role: 'follower',
      leaderId: reply[1],
      token: parseToken(reply[2]),
      ...(pttl >= 0 ? { leaseRemainingMs: pttl } : {}),
      ...(Number.isSafeInteger(holderLeaseMs) && holderLeaseMs > 0 ? { holderLeaseMs } : {}),
    };
  }

  async renew(keys: ElectionKeys, election: string, candidateId: string, token: number, leaseMs: number): Promise<RenewResult> {
    const reply = (await this.node.run({
      script: RENEW,
      many: RENEW_MANY,
      keys: [keys.lease, keys.term, keys.candidates],
      args: [candidateId, String(token), leaseMs, this.cttl(leaseMs), '0'],
      election,
      acknowledge: { what: 'renewal', leaseMs, needed: (r) => grants(r, 1) },
    })) as [number, string | null];
    if (reply[0] === 1) return { held: true, leaseMs };
    return { held: false, leaderId: reply[1] && !isTombstone(reply[1]) ? reply[1] : null };
  }

  async release(keys: ElectionKeys, election: string, candidateId: string, token: number | null): Promise<void> {
    await this.node.run({
      script: RELEASE,
      keys: [keys.lease, keys.candidates],
      args: [candidateId, token == null ? '' : String(token), this.options.publish ? '1' : '0', keys.channel, '1'],
      election,
    });
  }

  async getLeader(keys: ElectionKeys, election: string): Promise<LeaderInfo | null> {
    const reply = parseLeader(await this.node.run({ script: LEADER, keys: [keys.lease], args: [], election }));
    return reply ? leaderInfoOf(reply) : null;
  }

  /**
   * Revokes the live lease (REVOKE: a tombstone outliving it by commandTimeoutMs, the longest the
   * second step can take), waits until it ended, then INSTALLs the new term (see
   * `forceAfterRevocation`).
   */
  async forceLeader(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number): Promise<LeaderInfo> {
    return forceAfterRevocation({
      kind: 'redis',
      election,
      revoke: () => this.revoke(keys, election, this.options.commandTimeoutMs, candidateId),
      install: async () => {
        const reply = (await this.node.run({
          script: INSTALL,
          keys: [keys.lease, keys.term],
          args: [candidateId, leaseMs, '1', this.options.tokenClockFloor ? '1' : '0', this.options.publish ? '1' : '0', keys.channel],
          election,
          acknowledge: { what: 'forced term', leaseMs, needed: (r) => grants(r, 1) },
        })) as [number, string];
        return reply[0] === 1 ? { candidateId, token: Number(reply[1]) } : null;
      },
    });
  }

  /** A tombstone until the revoked lease's end: no new term starts before it. */
  async clearLeader(keys: ElectionKeys, election: string): Promise<void> {
    await this.revoke(keys, election, 0, '');
  }

  private async revoke(keys: ElectionKeys, election: string, graceMs: number, keepFor: string): Promise<Revocation> {
    const reply = (await this.node.run({
      script: REVOKE,
      keys: [keys.lease],
      args: [graceMs, keepFor, this.options.publish ? '1' : '0', keys.channel],
      election,
      // A revocation a promoted replica never saw would give the revoked leader its lease back.
      acknowledge: { what: 'revocation', leaseMs: this.options.defaultLeaseMs, needed: (r) => grants(r, 1, 2) },
    })) as [number, string?, string?];
    if (reply[0] === 1) return { kind: 'held', leader: { candidateId: keepFor, token: Number(reply[1]) } };
    if (reply[0] === 2) return { kind: 'revoked', waitMs: Math.max(0, Number(reply[1])) };
    return { kind: 'free' };
  }

  async listCandidates(keys: ElectionKeys, election: string): Promise<string[]> {
    const reply = await this.node.run({ script: CANDIDATES, keys: [keys.lease, keys.candidates], args: [], election });
    const { holder, seen } = parseCandidates(reply);
    return orderCandidates(isTombstone(holder) ? null : holder, seen).map(candidateOf);
  }

  async raiseTokenFloor(keys: ElectionKeys, election: string, token: number): Promise<void> {
    await this.node.run({
      script: FLOOR,
      keys: [keys.term],
      args: [String(token)],
      election,
      acknowledge: { what: 'token floor', leaseMs: this.options.defaultLeaseMs, needed: () => true },
    });
  }

  private cttl(leaseMs: number): number {
    return this.options.trackCandidates ? candidateTtlMs(leaseMs) : 0;
  }
}
