import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
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
import type { RedisNode, ScriptCall } from './redis-node';
import type { ResolvedRedisOptions } from './redis-options';
import { CAMPAIGN, CANDIDATES, COMMIT, FLOOR, INSTALL, LEADER, NOTIFY, RELEASE, RENEW, RENEW_MANY, REVOKE } from './redis-scripts';

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Redlock over N independent masters, implemented here on ioredis rather than with
 * `@sesamecare-oss/redlock`: that library's lock value is a random string it chooses, it has no
 * fencing token, its `extend` returns a new Lock or throws instead of telling "held by X", and
 * it cannot batch many elections into one pipeline. The SPI needs all of these, and the
 * algorithm itself is short.
 *
 * Lease: held when a majority of masters hold it; the granted lease, counted from the send, is
 * `lease − drift` (drift = lease × driftFactor + 2 ms, Redlock's allowance for clock-rate
 * differences between masters). The call fails if the majority was not reached before
 * `lease − drift` had passed (Redlock's "validity ≤ 0"). Redlock's `validity = lease − elapsed −
 * drift` is the same lease counted from *now*; the Elector counts from the send itself.
 *
 * Fencing token: every master keeps a term counter. A campaign (1) prepares the lease on every
 * master it can (token '0' = not committed) and reads each master's counter; (2) with a majority,
 * picks T = max(counters read, tokens seen) + 1 (at least the max server time in ms with
 * `tokenClockFloor`) and COMMITs it: on each master still held by this candidate, the lease gets
 * T and the counter becomes max(counter, T). T is returned only if a majority committed.
 * Why T grows: let an earlier term T0 have been committed on majority M0, and a later campaign
 * win majority M1. M0 ∩ M1 holds a master X. On X, the earlier lease was continuous from its
 * prepare to its commit (COMMIT checks the holder), and the later prepare found X free, so it
 * came after that commit (or after the earlier lease expired, which is after the commit, since
 * a term whose commit finished after its validity is never used) and read counter ≥ T0. So
 * T1 > T0. This holds while masters keep their counters: a master restarted without persistence
 * can break it (the classic Redlock caveat); `tokenClockFloor` keeps tokens increasing anyway as
 * long as the masters' clocks are ahead of every earlier token.
 */
export class QuorumLeaseOps implements LeaseOps {
  private readonly majority: number;

  constructor(
    private readonly nodes: RedisNode[],
    private readonly options: ResolvedRedisOptions,
  ) {
    this.majority = Math.floor(nodes.length / 2) + 1;
  }

  async campaign(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number, value: string | undefined): Promise<CampaignResult> {
    const sentAt = performance.now();
    const replies = await this.onAll(() => ({
      script: CAMPAIGN,
      keys: [keys.lease, keys.term, keys.candidates, keys.epoch],
      args: [candidateId, leaseMs, this.cttl(leaseMs), '0', '0', candidateOf(candidateId), '', valueArg(value)],
      election,
    }));
    const mine: number[] = []; // indices of masters where this candidate holds the lease now
    let highest = 0; // highest counter or token seen
    let latestNow = 0;
    const committed = new Map<number, number>(); // token → masters where we already hold it
    replies.forEach((r, i) => {
      if (!r.ok) return;
      const [code, a, b, c] = r.value as [number, string, string, string | number];
      if (code === 0) {
        highest = Math.max(highest, parseToken(b) ?? 0);
        return;
      }
      if (code === 3) {
        highest = Math.max(highest, parseToken(b) ?? 0); // fenced: b is the term counter
        return;
      }
      mine.push(i);
      highest = Math.max(highest, parseToken(b) ?? 0, parseToken(a) ?? 0);
      latestNow = Math.max(latestNow, Number(c) || 0);
      const held = parseToken(a);
      if (code === 1 && held !== null) committed.set(held, (committed.get(held) ?? 0) + 1);
    });

    if (mine.length >= this.majority) {
      // Campaign by the current holder (an earlier answer lost): keep the term if a majority
      // already has it and no master has seen a newer one.
      const current = [...committed.entries()].find(([token, count]) => count >= this.majority && token >= highest)?.[0];
      let token = current ?? highest + 1;
      if (current === undefined && this.options.tokenClockFloor) token = Math.max(token, latestNow);
      const toCommit = mine.filter((i) => !(current !== undefined && parseToken((replies[i] as { value: unknown[] }).value[1]) === current));
      const commits = await this.onSome(toCommit, () => ({
        script: COMMIT,
        keys: [keys.lease, keys.term],
        args: [candidateId, String(token), this.options.publish ? keys.elected : ''],
        election,
      }));
      const done = mine.length - toCommit.length + commits.filter((c) => c.ok && c.value === 1).length;
      const granted = this.granted(leaseMs);
      if (done >= this.majority && performance.now() - sentAt < granted) return { role: 'leader', token, leaseMs: granted };
      this.rollback(keys, election, candidateId, mine);
      if (done + commits.filter((c) => !c.ok).length >= this.majority) {
        throw this.unavailable('could not commit the new term on a majority of masters in time', election);
      }
      return this.follower(replies, mine);
    }

    if (mine.length > 0) this.rollback(keys, election, candidateId, mine);
    const reached = replies.filter((r) => r.ok).length;
    if (reached < this.majority) {
      throw this.unavailable(`only ${reached} of ${this.nodes.length} masters answered`, election, firstError(replies));
    }
    return this.follower(replies, mine);
  }

  async renew(keys: ElectionKeys, election: string, candidateId: string, token: number, leaseMs: number): Promise<RenewResult> {
    const sentAt = performance.now();
    const replies = await this.onAll(() => ({
      script: RENEW,
      many: RENEW_MANY,
      keys: [keys.lease, keys.term, keys.candidates],
      args: [candidateId, String(token), leaseMs, this.cttl(leaseMs), '1'],
      election,
    }));
    const held = replies.filter((r) => r.ok && (r.value as unknown[])[0] === 1).length;
    const failed = replies.filter((r) => !r.ok).length;
    const granted = this.granted(leaseMs);
    // A master holding another candidate's lease with a greater token: a newer term was committed
    // on a majority, which this term no longer has, whatever the masters we cannot reach say.
    const superseded = replies.some((r) => {
      if (!r.ok) return false;
      const [code, holder, held] = r.value as [number, string | null, string | null];
      return code === 0 && holder != null && holder !== candidateId && (parseToken(held) ?? 0) > token;
    });
    if (held >= this.majority && !superseded) {
      if (performance.now() - sentAt < granted) return { held: true, leaseMs: granted };
      throw this.unavailable('renewal confirmed too late to use', election);
    }
    if (held + failed >= this.majority && !superseded) {
      throw this.unavailable(`only ${replies.length - failed} of ${this.nodes.length} masters answered`, election, firstError(replies));
    }
    // Masters that had lost the lease (restarted empty) and took this term back: no newer term is
    // on them (RENEW checks their counter). While a master still holds the lease, they count from
    // the next renewal, so this term is in doubt for one call, not lost; rolling them back would
    // end it on every master at once. Held nowhere, the lease has ended and is not brought back.
    const repaired = replies.filter((r) => r.ok && (r.value as unknown[])[0] === 2).length;
    if (held > 0 && held + repaired + failed >= this.majority && !superseded) {
      throw this.unavailable(`the lease was repaired on ${repaired} of ${this.nodes.length} masters that had lost it; the next renewal confirms it`, election);
    }
    // Lost: take back what this term still holds (or just repaired) on a minority, so it does
    // not stand in the way of the next leader's majority.
    const stale = replies.flatMap((r, i) => (r.ok && (r.value as unknown[])[0] !== 0 ? [i] : []));
    if (stale.length > 0) this.rollback(keys, election, candidateId, stale, token);
    const others = replies.flatMap((r) => (r.ok && (r.value as unknown[])[1] ? [String((r.value as unknown[])[1])] : []));
    return { held: false, leaderId: mostCommon(others.filter((id) => id !== candidateId && !isTombstone(id))) };
  }

  async release(keys: ElectionKeys, election: string, candidateId: string, token: number | null): Promise<void> {
    const replies = await this.onAll(() => ({
      script: RELEASE,
      keys: [keys.lease, keys.candidates],
      args: [candidateId, token == null ? '' : String(token), this.options.publish ? '1' : '0', keys.channel, '1'],
      election,
    }));
    const reached = replies.filter((r) => r.ok).length;
    // With a majority released, no majority can still hold this lease; otherwise say so, the
    // caller's lease will have to expire on the masters we did not reach.
    if (reached < this.majority) {
      throw this.unavailable(`release reached only ${reached} of ${this.nodes.length} masters`, election, firstError(replies));
    }
  }

  async getLeader(keys: ElectionKeys, election: string): Promise<LeaderInfo | null> {
    const replies = await this.onAll(() => ({ script: LEADER, keys: [keys.lease], args: [], election }));
    this.requireMajority(replies, election);
    const leaders = replies.flatMap((r) => {
      const leader = r.ok ? parseLeader(r.value) : null;
      return leader ? [leader] : [];
    });
    const winner = mostCommon(leaders.map((l) => `${l.token} ${l.holder}`), this.majority);
    if (winner === null) return null;
    // Metadata from one master, so that its times come from one clock, and always the same one
    // while it is up (the first, in the order given, that agrees): each master records its own
    // `since`, a ms or so apart, and one read must not jump between them.
    return leaderInfoOf(leaders.find((l) => `${l.token} ${l.holder}` === winner)!);
  }

  /**
   * Revokes the live lease on every master (REVOKE, a majority must answer), waits until the
   * latest revoked lease any of them reported has ended, then installs the new term on a majority
   * (INSTALL as a prepare, then COMMIT with a token above every counter read, as a campaign does).
   * A master that did not answer the revocation may still hold the old lease, but the old holder
   * can no longer renew on a majority, and its lease on the masters that answered (a majority
   * meets the old term's majority) ended before the new term starts.
   */
  async forceLeader(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number): Promise<LeaderInfo> {
    return forceAfterRevocation({
      kind: 'redis',
      election,
      revoke: () => this.revoke(keys, election, this.options.commandTimeoutMs, candidateId),
      install: () => this.install(keys, election, candidateId, leaseMs),
    });
  }

  /** A tombstone on every master until the revoked lease's end; a majority must answer. */
  async clearLeader(keys: ElectionKeys, election: string): Promise<void> {
    await this.revoke(keys, election, 0, '');
  }

  private async revoke(keys: ElectionKeys, election: string, graceMs: number, keepFor: string): Promise<Revocation> {
    const replies = await this.onAll(() => ({
      script: REVOKE,
      keys: [keys.lease],
      args: [graceMs, keepFor, this.options.publish ? '1' : '0', keys.channel],
      election,
    }));
    this.requireMajority(replies, election);
    const values = replies.flatMap((r) => (r.ok ? [r.value as [number, string?, string?]] : []));
    const held = mostCommon(values.flatMap((v) => (v[0] === 1 && parseToken(v[1]) !== null ? [String(v[1])] : [])), this.majority);
    if (held !== null) return { kind: 'held', leader: { candidateId: keepFor, token: Number(held) } };
    const waits = values.flatMap((v) => (v[0] === 2 ? [Math.max(0, Number(v[1]))] : []));
    return waits.length > 0 ? { kind: 'revoked', waitMs: Math.max(...waits) } : { kind: 'free' };
  }

  private async install(keys: ElectionKeys, election: string, candidateId: string, leaseMs: number): Promise<LeaderInfo | null> {
    const prepared = await this.onAll(() => ({
      script: INSTALL,
      keys: [keys.lease, keys.term],
      args: [candidateId, leaseMs, '0', '0', '0', keys.channel],
      election,
    }));
    this.requireMajority(prepared, election);
    const ok = prepared.flatMap((r, i) => (r.ok && (r.value as unknown[])[0] === 1 ? [i] : []));
    if (ok.length < this.majority) {
      // A lease still stands on too many masters: give back what was installed, revoke again.
      if (ok.length > 0) this.rollback(keys, election, candidateId, ok);
      return null;
    }
    const values = ok.map((i) => (prepared[i] as { value: string[] }).value);
    let token = 1 + Math.max(...values.map((v) => parseToken(v[2]) ?? 0));
    if (this.options.tokenClockFloor) token = Math.max(token, ...values.map((v) => Number(v[3]) || 0));
    const commits = await this.onSome(ok, () => ({
      script: COMMIT,
      keys: [keys.lease, keys.term],
      args: [candidateId, String(token), this.options.publish ? keys.elected : ''],
      election,
    }));
    if (commits.filter((c) => c.ok && c.value === 1).length < this.majority) {
      throw this.unavailable('could not commit the forced term on a majority of masters', election, firstError(commits));
    }
    if (this.options.publish) {
      await this.onAll(() => ({ script: NOTIFY, keys: [], args: [keys.channel, 'forced'], election }));
    }
    return { candidateId, token };
  }

  async listCandidates(keys: ElectionKeys, election: string): Promise<string[]> {
    const replies = await this.onAll(() => ({ script: CANDIDATES, keys: [keys.lease, keys.candidates], args: [], election }));
    this.requireMajority(replies, election);
    const seen = new Map<string, number>();
    const holders: string[] = [];
    for (const r of replies) {
      if (!r.ok) continue;
      const parsed = parseCandidates(r.value);
      if (parsed.holder && !isTombstone(parsed.holder)) holders.push(parsed.holder);
      for (const [id, score] of parsed.seen) seen.set(id, Math.max(score, seen.get(id) ?? 0));
    }
    return orderCandidates(mostCommon(holders, this.majority), seen).map(candidateOf);
  }

  /** On a majority, so that every later majority read (a prepare) meets one raised counter. */
  async raiseTokenFloor(keys: ElectionKeys, election: string, token: number): Promise<void> {
    const replies = await this.onAll(() => ({ script: FLOOR, keys: [keys.term], args: [String(token)], election }));
    this.requireMajority(replies, election);
  }

  // ---- helpers --------------------------------------------------------------------------

  private granted(leaseMs: number): number {
    return leaseMs - Math.floor(leaseMs * this.options.driftFactor) - 2;
  }

  private onAll(call: () => ScriptCall): Promise<Settled<unknown>[]> {
    return this.onSome(
      this.nodes.map((_, i) => i),
      call,
    );
  }

  /** Runs the call on the masters `indices` at once; one result per index, never rejects. */
  private onSome(indices: number[], call: () => ScriptCall): Promise<Settled<unknown>[]> {
    return Promise.all(
      indices.map((i) =>
        this.nodes[i]!.run(call()).then(
          (value): Settled<unknown> => ({ ok: true, value }),
          (error: unknown): Settled<unknown> => ({ ok: false, error }),
        ),
      ),
    );
  }

  /** Gives back a lease taken on too few masters (no message: nothing changed for others). */
  private rollback(keys: ElectionKeys, election: string, candidateId: string, indices: number[], token?: number): void {
    // Fire and forget: a master we cannot reach lets the lease expire.
    void this.onSome(indices, () => ({
      script: RELEASE,
      keys: [keys.lease, keys.candidates],
      args: [candidateId, token === undefined ? '' : String(token), '0', keys.channel, '0'],
      election,
    }));
  }

  private follower(replies: Settled<unknown>[], mine: number[]): CampaignResult {
    const holders: string[] = [];
    const tokens = new Map<string, number | null>();
    // The lease is free on a majority once the majority-th shortest remaining time has passed;
    // a master we did not hear from may hold it for the whole lease.
    const remaining = replies.map((r, i) => {
      if (!r.ok) return Infinity;
      if (mine.includes(i)) return 0;
      const [code, holder, token, pttl] = r.value as [number, string, string, string | number];
      if (code === 3) return Math.max(0, Number(holder)); // restart fence: free after waitMs
      if (code !== 0) return 0;
      // A revoked lease (tombstone): held by nobody until it could have ended.
      if (isTombstone(holder)) return tombstoneLookAgainMs(holder, Math.max(0, Number(pttl)));
      holders.push(holder);
      if (!tokens.has(holder) || parseToken(token) !== null) tokens.set(holder, parseToken(token));
      return Math.max(0, Number(pttl));
    });
    remaining.sort((a, b) => a - b);
    let wait = remaining[this.majority - 1]!;
    // A split vote frees itself at once (everyone rolls back): spread the retries so the next
    // round does not split again.
    if (wait === 0) wait = 5 + Math.floor(Math.random() * 45);
    const leaderId = mostCommon(holders);
    return {
      role: 'follower',
      leaderId,
      token: leaderId === null ? null : (tokens.get(leaderId) ?? null),
      ...(Number.isFinite(wait) ? { leaseRemainingMs: wait } : {}),
    };
  }

  private requireMajority(replies: Settled<unknown>[], election: string): void {
    const reached = replies.filter((r) => r.ok).length;
    if (reached < this.majority) {
      throw this.unavailable(`only ${reached} of ${this.nodes.length} masters answered`, election, firstError(replies));
    }
  }

  private unavailable(message: string, election: string, cause?: unknown): ConclaveError {
    if (cause instanceof ConclaveError && cause.code !== 'BACKEND_UNAVAILABLE') return cause;
    return new ConclaveError('BACKEND_UNAVAILABLE', `quorum: ${message}`, {
      backend: 'redis',
      election,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  private cttl(leaseMs: number): number {
    return this.options.trackCandidates ? candidateTtlMs(leaseMs) : 0;
  }
}

/** The most frequent value, or null; with `atLeast`, only if it occurs that often. */
function mostCommon(values: string[], atLeast = 1): string | null {
  const counts = new Map<string, number>();
  let best: string | null = null;
  for (const v of values) {
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (best === null || n > counts.get(best)!) best = v;
  }
  return best !== null && counts.get(best)! >= atLeast ? best : null;
}

/**
 * The first failure, preferring one a master answered (refused credentials, a missing ACL
 * permission, a server error) to a failure to reach one: `unavailable` passes those on, so a
 * refusal is not hidden behind a master that happened to be down.
 */
function firstError(replies: Settled<unknown>[]): unknown {
  const errors = replies.flatMap((r) => (r.ok ? [] : [r.error]));
  return errors.find((e) => e instanceof ConclaveError && e.code !== 'BACKEND_UNAVAILABLE') ?? errors[0];
}
