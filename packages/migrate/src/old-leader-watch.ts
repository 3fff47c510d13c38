import { performance } from 'node:perf_hooks';
import { candidateOf, withTimeout, type ElectionBackend, type LeaderInfo } from '@conclave/core/spi';

/**
 * What a `to-only` candidate knows of `from`'s leader, to keep the one forbidden mix — old
 * `from`-only nodes beside `to-only` nodes, which share no lease — from making two leaders.
 *
 * A `to-only` candidate cannot tell an old node from a dual one by its id, but it can by
 * behaviour. A dual candidate leads only while it holds `to` as well, and one that reaches
 * `from`'s head while it cannot take `to` gives `from` back at once (or within half a lease, when
 * `to` does not answer). An old node stays at `from`'s head for as long as it lives. So:
 *
 * - `from` showing a leader while `to` is free means an old node, or a dual one passing through
 *   `from`'s head: a `to-only` candidate does not start a term beside it (it waits).
 * - the same `from` term seen for a whole lease is suspect: an old node, or a dead candidate
 *   still shown (a ZooKeeper node outlives its process until its session expires). A `to-only`
 *   leader gives `to` back then, since an old node may be leading beside it.
 * - the same `from` term seen for longer than a dead candidate can be shown (`staleLeaderMs`,
 *   plus a lease for the server's expiry rounds and a busy machine) is an old node: a conflict,
 *   reported.
 * - unless its holder has been seen leading `to` (a follower's campaign on `to` names `to`'s
 *   leader): an old node never holds `to`, so that `from` term is a dual one. It neither blocks
 *   a new term on `to` (whoever takes `to` ends the dual term: a dual leader needs both) nor
 *   counts as a conflict, however long it stays — a killed dual leader's ZooKeeper node outlives
 *   its `to` lease until its session expires.
 *
 * Looks are made in the background at most every half lease while following or leading, and
 * one is awaited (briefly) before each new term. A new term waits for `from`'s answer: one still
 * awaited is no answer that `from` is free (a loaded `from` would otherwise let a to-only
 * candidate lead beside the old node it has not yet shown). A look that fails, or is unanswered
 * for a lease, counts as "`from` unknown": `from` may be gone for good once the migration is
 * over, and then `to-only` candidates lead on `to` alone.
 */
export class OldLeaderWatch {
  /** `from`'s leader as first seen in its present term, by election. */
  private readonly sightings = new Map<string, LeaderInfo & { since: number; dual: boolean }>();
  /** `to`'s leader as a campaign on `to` last named it, and when, by election. */
  private readonly toLeaders = new Map<string, { candidateId: string; at: number }>();
  /** The last look's outcome and when it ended, by election. */
  private readonly looks = new Map<string, { at: number; known: boolean }>();
  /** Looks under way, by election. */
  private readonly pending = new Map<string, Promise<void>>();
  /** Elections whose `from` term has lasted a lease (see the class comment). */
  private readonly suspects = new Set<string>();
  /** Elections with a conflict (the message). */
  private readonly conflicts = new Map<string, string>();

  constructor(
    private readonly from: ElectionBackend,
    private readonly toKind: string,
  ) {}

  /** The conflict found on `election`, if any: an old node leads on `from`. */
  conflict(election: string): string | undefined {
    return this.conflicts.get(election);
  }

  /** Whether the same non-dual `from` term has lasted a lease: an old node may lead there. */
  suspected(election: string): boolean {
    return this.suspects.has(election);
  }

  /**
   * `to`'s leader, as a follower's campaign on `to` named it: a `from` term held by the same
   * candidate is a dual term (see the class comment).
   */
  noteToLeader(election: string, candidateId: string | null | undefined): void {
    // Backends that cannot tell the leader may leave it out.
    if (candidateId == null) return;
    // Campaign answers may name the instance (`<candidate id> <nonce>`); getLeader names the candidate.
    const leader = candidateOf(candidateId);
    this.toLeaders.set(election, { candidateId: leader, at: performance.now() });
    const seen = this.sightings.get(election);
    if (seen?.candidateId === leader) {
      seen.dual = true;
      this.suspects.delete(election);
      this.conflicts.delete(election);
    }
  }

  /** Starts a look at `from`'s leader unless one ended less than half a lease ago. */
  lookSoon(election: string, leaseMs: number): void {
    const last = this.looks.get(election);
    if (this.pending.has(election) || (last && performance.now() - last.at < leaseMs / 2)) return;
    this.look(election, leaseMs);
  }

  /**
   * `from`'s leader before a new term on `to`, from a new look awaited for at most `waitMs`
   * (unless `from` was found unknown less than half a lease ago: then at once). Resolves to the
   * leader, null when `from` has none or its leader's term is a dual one, undefined when `from`
   * is unknown (the look failed, or went unanswered for a lease), or `'looking'` when the look is
   * still awaited and no look answered in the last half lease: no term until `from` answers.
   */
  async leaderBeforeTerm(election: string, leaseMs: number, waitMs: number): Promise<LeaderInfo | null | undefined | 'looking'> {
    const last = this.looks.get(election);
    if (last && !last.known && performance.now() - last.at < leaseMs / 2) return undefined;
    const look = this.pending.get(election) ?? this.look(election, leaseMs);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([look, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    if (this.pending.get(election) === look) {
      // Still awaited: the last look answered tells, when recent enough (as a background look would).
      if (!last?.known || performance.now() - last.at >= leaseMs / 2) return 'looking';
    } else if (!this.looks.get(election)?.known) {
      return undefined;
    }
    const seen = this.sightings.get(election);
    return seen && !seen.dual ? seen : null;
  }

  clear(): void {
    this.sightings.clear();
    this.toLeaders.clear();
    this.looks.clear();
    this.pending.clear();
    this.suspects.clear();
    this.conflicts.clear();
  }

  private look(election: string, leaseMs: number): Promise<void> {
    // A `from` that hangs for a lease is unknown.
    const look = withTimeout(this.from.getLeader(election), leaseMs, () => new Error('no answer within a lease'))
      .then(
        (leader) => {
          this.record(election, leader, leaseMs);
          return true;
        },
        () => false,
      )
      .then((known) => {
        this.looks.set(election, { at: performance.now(), known });
        if (this.pending.get(election) === look) this.pending.delete(election);
      });
    this.pending.set(election, look);
    return look;
  }

  private record(election: string, leader: LeaderInfo | null, leaseMs: number): void {
    const at = performance.now();
    const seen = this.sightings.get(election);
    if (!leader || !seen || seen.candidateId !== leader.candidateId || seen.token !== leader.token) {
      if (leader) this.sightings.set(election, { ...leader, since: at, dual: this.ledTo(election, leader.candidateId, at, leaseMs) });
      else this.sightings.delete(election);
      this.suspects.delete(election);
      this.conflicts.delete(election);
      return;
    }
    if (seen.dual) return;
    const seenFor = at - seen.since;
    if (seenFor >= leaseMs) this.suspects.add(election);
    if (seenFor >= Math.max(leaseMs, (this.from.staleLeaderMs ?? 0) + leaseMs)) {
      this.conflicts.set(
        election,
        `migration conflict: ${leader.candidateId} leads on ${this.from.kind} (token ${leader.token}) without ` +
          `taking part in the migration, while to-only candidates campaign on ${this.toKind}; old ${this.from.kind}-only ` +
          'nodes must not run beside to-only nodes (they share no lease): refusing to lead until it is gone',
      );
    }
  }

  /** Whether `candidateId` was named `to`'s leader within the last lease. */
  private ledTo(election: string, candidateId: string, at: number, leaseMs: number): boolean {
    const onTo = this.toLeaders.get(election);
    return onTo !== undefined && onTo.candidateId === candidateId && at - onTo.at <= leaseMs;
  }
}
