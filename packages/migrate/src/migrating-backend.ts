import { performance } from 'node:perf_hooks';
import {
  ConclaveError,
  assertCandidateId,
  capabilityOf,
  supports,
  assertInstanceId,
  assertElectionName,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type LeaderMetadataCapabilities,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';
import { resolveMigratingOptions, type MigratingBackendOptions, type MigrationPhase } from './migration-options';
import { OldLeaderWatch } from './old-leader-watch';

const KIND = 'migrate';
/** A campaign round that must be made again (see `campaign`). */
const RETRY = Symbol('retry');
/** to-only: how long a new term waits at most for a look at `from` (see OldLeaderWatch). */
const FROM_LOOK_WAIT_MS = 1000;

/** The two leases a dual candidate holds for one term. */
interface DualTerm {
  fromToken: number;
  toToken: number;
}

/**
 * A backend made of two backends, for moving an election from `from` to `to` one process at a
 * time with never two leaders (switching a whole fleet at once can make two).
 *
 * In `dual`, a candidate leads only while it holds the lease on both backends, taken from → to.
 * Whoever leads in a fleet of `from-only` + `dual` nodes holds `from`; whoever leads in a fleet
 * of `dual` + `to-only` nodes holds `to`; so at every step of the rollout one lease excludes a
 * second leader. A dual term is one `from` term and one `to` term: a candidate that cannot take
 * `to` gives `from` back at once (old candidates lead meanwhile), and losing either side gives
 * the other back at once.
 *
 * Fencing tokens: a dual term's token is `to`'s token, and before taking `to` a dual candidate
 * raises `to`'s token floor to its `from` token − 1 (`raiseTokenFloor`). While `to` is fresh (the
 * usual case: only dual nodes have used it), a dual term's token therefore *equals* its `from`
 * token, so dual and `from-only` nodes share `from`'s increasing sequence; once `to-only` nodes
 * take part, every leader holds `to` and `to`'s sequence increases by itself. A dual term never
 * goes on with a new `to` term under an old `from` term (its token could run ahead of what
 * `from` issues next); it starts afresh on both sides instead. After taking `to`,
 * a dual candidate also raises `from`'s floor to its token where `from` supports it, so a
 * rollback to `from-only` keeps increasing too. See the README for the rule this relies on at
 * the dual → to-only step, and for pairs whose `to` cannot raise its floor.
 */
export class MigratingBackend implements ElectionBackend {
  readonly kind = KIND;
  readonly capabilities: BackendCapabilities;
  readonly phase: MigrationPhase;
  readonly from: ElectionBackend;
  readonly to: ElectionBackend;

  private readonly closeBackends: boolean;
  /** Terms this backend's candidates hold in `dual`, by election and candidate. */
  private readonly terms = new Map<string, DualTerm>();
  /** The highest `from` token each candidate has led with in `dual`; a new term never reuses one. */
  private readonly ledFrom = new Map<string, number>();
  /** The same for `to`. */
  private readonly ledTo = new Map<string, number>();
  /**
   * dual: a `to` that answered follower, by candidate, and until when its leader's lease runs;
   * meanwhile `campaign` answers the same without taking `from`.
   */
  private readonly toBusy = new Map<string, { until: number; answer: CampaignResult & { role: 'follower' } }>();
  /** to-only: what is known of `from`'s leader (see OldLeaderWatch). */
  private readonly oldLeaders: OldLeaderWatch;
  /** dual: the end of each candidate's last campaign (see `campaign`). */
  private readonly campaigning = new Map<string, Promise<void>>();

  /** Throws `INVALID_OPTIONS` for bad options; does no I/O. */
  constructor(options: MigratingBackendOptions) {
    const resolved = resolveMigratingOptions(options);
    this.from = resolved.from;
    this.to = resolved.to;
    this.phase = resolved.phase;
    this.closeBackends = resolved.closeBackends;
    this.oldLeaders = new OldLeaderWatch(this.from, this.to.kind);
    this.capabilities = this.phase === 'dual' ? dualCapabilities(this.from, this.to) : this.single().capabilities;
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    if (this.phase === 'to-only') return this.campaignToOnly(request);
    if (this.phase !== 'dual') return this.single().campaign(request);
    const { election, candidateId } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    // A campaign the caller gave up on may still be running, and what it gives back (`from`, once
    // `to` failed) would end the term the next campaign joined: so a candidate's dual campaigns
    // take turns. Waiting for the turn ends, unsent, when the caller gives up on this one.
    const previous = this.campaigning.get(key);
    const run = (async () => {
      if (previous) await turnOrGiveUp(previous, request);
      // A second round only when a side handed back a term this candidate already led with and
      // gave up (its release was lost or failed), or when `to`'s term ended under a `from` term
      // that went on: `campaignDual` has given that back, and the next round takes a fresh one.
      for (let round = 0; round < 2; round++) {
        const result = await this.campaignDual(request, key);
        if (result !== RETRY) return result;
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', `${this.from.kind} keeps answering with a term already given up`, {
        backend: KIND,
        election,
      });
    })();
    const ended = run.then(
      () => undefined,
      () => undefined,
    );
    // The next campaign waits for this one, which ends after the previous one even if it gave up.
    const tail = previous ? previous.then(() => ended) : ended;
    this.campaigning.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.campaigning.get(key) === tail) this.campaigning.delete(key);
    }
  }

  /**
   * One dual campaign. A dual term is one `from` term and one `to` term taken together; when
   * either ends, both are given up, and the next dual term starts a fresh term on both sides.
   * So a dual term's token never runs ahead of what `from` issues next (see the README), and a
   * candidate that cannot lead on `to` never sits on `from`'s lease (old candidates lead).
   */
  private async campaignDual(request: CampaignRequest, key: string): Promise<CampaignResult | typeof RETRY> {
    const { election, candidateId } = request;
    const held = this.terms.get(key);
    const busy = held ? undefined : this.toBusy.get(key);
    if (busy) {
      // `to` told us lately that another candidate holds it: taking `from` now would only give
      // it back at once (and wake the next candidate to do the same, round and round). Answer as
      // `to` did until its lease can end, or until `to` pushes a change (see `watch`).
      const left = Math.ceil(busy.until - performance.now());
      if (left > 0) return { ...busy.answer, leaseRemainingMs: left };
      this.toBusy.delete(key);
    }
    let onFrom: CampaignResult;
    try {
      onFrom = await this.from.campaign(request);
    } catch (err) {
      if (held) await this.dropTerm(key, held, { election, candidateId }, 'to');
      throw err;
    }
    if (onFrom.role === 'follower') {
      // We lost `from`: give `to` back at once rather than block the next dual leader for a lease.
      if (held) await this.dropTerm(key, held, { election, candidateId }, 'to');
      return onFrom;
    }
    const fromToken = onFrom.token;
    const joining = held !== undefined && held.fromToken === fromToken;
    if (held && !joining) {
      // `from` is in a new term while an older one is recorded: that `to` term is over too.
      await this.dropTerm(key, held, { election, candidateId }, 'to');
    }
    if (!joining && fromToken <= (this.ledFrom.get(key) ?? 0)) {
      // `from` still holds a term we led with and gave up (its release was lost or failed).
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      return RETRY;
    }
    if (joining) return this.goOn(request, key, held!, onFrom);
    let onTo: CampaignResult;
    const toFloorRaised = !joining && supports(this.to, 'tokenFloor');
    try {
      if (toFloorRaised) await this.to.raiseTokenFloor!(election, Math.max(0, fromToken - 1));
      onTo = await this.campaignTo(request, key);
    } catch (err) {
      // `to` cannot be reached: give up our place on `from` so that a from-only candidate can
      // lead meanwhile; the next campaign takes it again.
      this.terms.delete(key);
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      throw err;
    }
    if (onTo.role === 'follower') {
      // Someone else holds `to` (a to-only node, or a dual node on its way out): we cannot lead,
      // so we do not keep `from` either.
      this.terms.delete(key);
      const waitMs = onTo.leaseRemainingMs ?? Math.floor(request.leaseMs / 3);
      this.toBusy.set(key, { until: performance.now() + waitMs, answer: onTo });
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      return onTo;
    }
    const toToken = onTo.token;
    if ((!joining && toToken <= (this.ledTo.get(key) ?? 0)) || (toFloorRaised && toToken < fromToken)) {
      // `to` still holds a term we led with and gave up (its release failed), or a term that
      // started before the floor was raised (a lease forced on `to` alone, below what `from` has
      // issued since): give it back and look again, for a fresh term.
      await settle(this.to.release({ election, candidateId, token: toToken }));
      return RETRY;
    }
    if (!joining && supports(this.from, 'tokenFloor')) {
      try {
        await this.from.raiseTokenFloor!(election, toToken);
      } catch (err) {
        await Promise.allSettled([
          this.to.release({ election, candidateId, token: toToken }),
          this.from.release({ election, candidateId, token: fromToken }),
        ]);
        throw err;
      }
    }
    this.terms.set(key, { fromToken, toToken });
    this.ledFrom.set(key, Math.max(fromToken, this.ledFrom.get(key) ?? 0));
    this.ledTo.set(key, Math.max(toToken, this.ledTo.get(key) ?? 0));
    return { role: 'leader', token: toToken, leaseMs: Math.min(onFrom.leaseMs, onTo.leaseMs) };
  }

  /**
   * A campaign while both sides of our term are still recorded (an earlier answer was lost, or
   * the Elector gave the term up locally): the term goes on if `to` still holds it. If `to`'s term
   * ended, taking `to` again under the same `from` term would give a token above what `from`
   * issues next (and spend one of `to`'s tokens): give `from` up too, and start afresh.
   */
  private async goOn(
    request: CampaignRequest,
    key: string,
    held: DualTerm,
    onFrom: CampaignResult & { role: 'leader' },
  ): Promise<CampaignResult | typeof RETRY> {
    const { election, candidateId, leaseMs } = request;
    let onTo: RenewResult;
    try {
      onTo = await this.withinHalfLease(this.to.renew({ election, candidateId, token: held.toToken, leaseMs }), request, 'renewal');
    } catch (err) {
      await this.dropTerm(key, held, { election, candidateId }, 'from');
      throw err;
    }
    if (!onTo.held) {
      await this.dropTerm(key, held, { election, candidateId }, 'from');
      return RETRY;
    }
    return { role: 'leader', token: held.toToken, leaseMs: Math.min(onFrom.leaseMs, onTo.leaseMs) };
  }

  /**
   * `to.campaign`, bounded by half the lease: a `to` that does not answer (cut off, frozen) must
   * not keep this candidate on `from`'s lease. A lease `to` grants after we stopped waiting is
   * given back.
   */
  private async campaignTo(request: CampaignRequest, key: string): Promise<CampaignResult> {
    const { election, candidateId } = request;
    const call = this.to.campaign(request);
    try {
      return await this.withinHalfLease(call, request, 'campaign');
    } catch (err) {
      call.then(
        (late) => {
          if (late.role === 'leader' && this.terms.get(key)?.toToken !== late.token) {
            void settle(this.to.release({ election, candidateId, token: late.token }));
          }
        },
        () => undefined,
      );
      throw err;
    }
  }

  /** `call`, or BACKEND_UNAVAILABLE when `to` has not answered it within half the lease. */
  private async withinHalfLease<T>(call: Promise<T>, request: { election: string; leaseMs: number }, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ConclaveError('BACKEND_UNAVAILABLE', `${this.to.kind} did not answer the ${what} in time`, {
              backend: KIND,
              election: request.election,
            }),
          ),
        Math.max(1, Math.floor(request.leaseMs / 2)),
      );
    });
    try {
      return await Promise.race([call, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Forgets a dual term and gives back the side(s) named; never throws. */
  private async dropTerm(
    key: string,
    held: DualTerm,
    who: { election: string; candidateId: string },
    ...sides: Array<'from' | 'to'>
  ): Promise<void> {
    if (this.terms.get(key) === held) this.terms.delete(key);
    await Promise.allSettled(
      sides.map((side) =>
        side === 'to'
          ? this.to.release({ ...who, token: held.toToken })
          : this.from.release({ ...who, token: held.fromToken }),
      ),
    );
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    if (this.phase === 'to-only') return this.renewToOnly(request);
    if (this.phase !== 'dual') return this.single().renew(request);
    const { election, candidateId, token, leaseMs } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.terms.get(key);
    if (!held || held.toToken !== token) return { held: false, leaderId: null };
    const [onFrom, onTo] = await Promise.allSettled([
      this.from.renew({ ...timingOf(request), election, candidateId, token: held.fromToken, leaseMs }),
      this.to.renew({ ...timingOf(request), election, candidateId, token: held.toToken, leaseMs }),
    ]);
    const lostFrom = onFrom.status === 'fulfilled' && !onFrom.value.held;
    const lostTo = onTo.status === 'fulfilled' && !onTo.value.held;
    if (lostFrom || lostTo) {
      // Losing either side ends the dual term: the other side is given back at once, so that
      // whoever can lead next (an old candidate on `from`, a dual one) need not wait for it.
      const others: Array<'from' | 'to'> = [];
      if (!lostFrom) others.push('from');
      if (!lostTo) others.push('to');
      await this.dropTerm(key, held, { election, candidateId }, ...others);
      const leaderOf = (r: PromiseSettledResult<RenewResult>) =>
        r.status === 'fulfilled' && !r.value.held ? r.value.leaderId : null;
      return { held: false, leaderId: leaderOf(onFrom) ?? leaderOf(onTo) };
    }
    if (onFrom.status === 'rejected') throw onFrom.reason;
    if (onTo.status === 'rejected') throw onTo.reason;
    const leases = [onFrom.value, onTo.value].map((r) => (r.held ? r.leaseMs : 0));
    return { held: true, leaseMs: Math.min(...leases) };
  }

  async release(request: ReleaseRequest): Promise<void> {
    if (this.phase !== 'dual') return this.single().release(request);
    const { election, candidateId, token } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.terms.get(key);
    // A release for an older term than the one we hold must not touch the newer term's `from`.
    const sameTerm = token == null || held?.toToken === token;
    if (sameTerm) this.terms.delete(key);
    this.toBusy.delete(key);
    // Both sides, each whatever the other does: a `to` that is down must not keep `from`.
    const results = await Promise.allSettled([
      // The core's tokens are `to`'s: its bound applies there as it is.
      this.to.release({
        ...timingOf(request),
        election,
        candidateId,
        token: token ?? null,
        ...(token == null && request.notAbove !== undefined ? { notAbove: request.notAbove } : {}),
      }),
      sameTerm ? this.from.release({ ...timingOf(request), election, candidateId, token: held?.fromToken ?? null }) : Promise.resolve(),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  // ---- to-only: the forbidden mix --------------------------------------------------------
  //
  // Old `from`-only nodes beside `to-only` nodes share no lease. A to-only candidate keeps that
  // mix from making two leaders where it can (OldLeaderWatch): it starts no term on `to` while
  // `from` shows a leader, and once the same `from` term has lasted longer than a dead candidate
  // can be shown (an old node, not a dual one passing through nor a dead one) it refuses to lead
  // at all (MIGRATION_CONFLICT, which the Elector logs as an error and reports in health()) until
  // `from` shows no leader or another term. A to-only leader keeps looking at `from` while it
  // renews, and gives `to` back once the same `from` term has lasted a lease: an old node started
  // beside it leads at once, and overlaps it until then.

  private async campaignToOnly(request: CampaignRequest): Promise<CampaignResult> {
    const { election, candidateId, leaseMs } = request;
    validate(election, candidateId);
    const conflict = this.oldLeaders.conflict(election);
    if (conflict) {
      this.oldLeaders.lookSoon(election, leaseMs);
      throw new ConclaveError('MIGRATION_CONFLICT', conflict, { backend: KIND, election });
    }
    const result = await this.to.campaign(request);
    if (result.role !== 'leader') {
      this.oldLeaders.noteToLeader(election, result.leaderId);
      this.oldLeaders.lookSoon(election, leaseMs);
      return result;
    }
    const onFrom = await this.oldLeaders.leaderBeforeTerm(election, leaseMs, Math.min(leaseMs / 4, FROM_LOOK_WAIT_MS));
    if (!onFrom) return result; // no leader on `from`, or `from` unknown (gone or down)
    await settle(this.to.release({ election, candidateId, token: result.token }));
    const found = this.oldLeaders.conflict(election);
    if (found) throw new ConclaveError('MIGRATION_CONFLICT', found, { backend: KIND, election });
    // An old node, or a dual one passing through `from`'s head: look again in half a lease.
    return { role: 'follower', leaderId: onFrom.candidateId, token: onFrom.token, leaseRemainingMs: Math.ceil(leaseMs / 2) };
  }

  private async renewToOnly(request: RenewRequest): Promise<RenewResult> {
    const { election, candidateId, token } = request;
    validate(election, candidateId);
    // An old node may lead beside this term: give `to` back (the conflict is reported once sure).
    if (this.oldLeaders.suspected(election)) {
      await settle(this.to.release({ election, candidateId, token }));
      return { held: false, leaderId: null };
    }
    const result = await this.to.renew(request);
    if (result.held) this.oldLeaders.lookSoon(election, request.leaseMs);
    return result;
  }

  /**
   * In `dual`, the leader that acts: whoever holds `to` (a dual leader, holding both, or a
   * to-only one beside dual nodes), with the token its Elector holds; else `from`'s (an old node
   * beside dual ones). Both sides are read, and either failing fails the answer: one side alone
   * cannot tell which fleet mix is running. The leader metadata is that side's, limited to the
   * fields both sides keep (what `capabilities` declares), so a field does not come and go with
   * the side reported.
   */
  async getLeader(election: string): Promise<LeaderInfo | null> {
    if (this.phase !== 'dual') return this.single().getLeader(election);
    validate(election);
    const [onFrom, onTo] = await Promise.all([this.from.getLeader(election), this.to.getLeader(election)]);
    const info = onTo ?? onFrom;
    return info && keepDeclared(info, capabilityOf(this, 'leaderMetadata'));
  }

  /**
   * dual: forces `from`, then `to` (its floor raised to `from`'s new token first, so the forced
   * term's token follows `from`'s sequence). Each side starts its forced term only once the lease
   * it revoked has ended, and a dual candidate leads only while it holds both: so nobody leads
   * beside the revoked leader, whichever kind it was. One side after the other, so this may take
   * up to two leases (usually one: the revoked dual leader gives `to` back when `from` refuses
   * its renewal, and `to` is then free).
   */
  async forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    if (this.phase !== 'dual') return this.single().forceLeader(election, candidateId, leaseMs);
    validate(election, candidateId);
    assertCandidateId(candidateId, KIND, election);
    const onFrom = await this.from.forceLeader(election, candidateId, leaseMs);
    if (supports(this.to, 'tokenFloor')) {
      await this.to.raiseTokenFloor!(election, Math.max(0, onFrom.token - 1));
    }
    return this.to.forceLeader(election, candidateId, leaseMs);
  }

  async clearLeader(election: string): Promise<void> {
    if (this.phase !== 'dual') return this.single().clearLeader(election);
    validate(election);
    // Both sides at once, each whatever the other does; each keeps its new terms back until the
    // lease it revoked has ended, and a dual candidate needs both.
    const results = await Promise.allSettled([this.to.clearLeader(election), this.from.clearLeader(election)]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  get listCandidates(): ((election: string) => Promise<string[]>) | undefined {
    const side = this.phase === 'to-only' ? this.to : this.from;
    return supports(side, 'listCandidates') ? (election) => side.listCandidates!(election) : undefined;
  }

  get watch(): ElectionBackend['watch'] {
    const sides = (this.phase === 'dual' ? [this.from, this.to] : [this.single()]).filter((b) => supports(b, 'push'));
    if (sides.length === 0) return undefined;
    return (election, candidateId, onChange) => {
      const key = termKey(election, candidateId);
      const unwatches = sides.map((b) =>
        b.watch!(
          election,
          candidateId,
          b === this.to && this.phase === 'dual'
            ? () => {
                // `to` changed: it may be free now, look at once (see `campaignDual`).
                this.toBusy.delete(key);
                onChange();
              }
            : onChange,
        ),
      );
      return () => unwatches.forEach((unwatch) => unwatch());
    };
  }

  /** An observer follows the side `getLeader` reads: `from` until `to-only`. */
  /** The longer of the sides' (in `dual`, `getLeader` reads both). */
  get staleLeaderMs(): ElectionBackend['staleLeaderMs'] {
    const sides = (this.phase === 'dual' ? [this.from, this.to] : [this.single()]).filter((b) => b.staleLeaderMs);
    if (sides.length === 0) return undefined;
    return () => Math.max(...sides.map((b) => b.staleLeaderMs!()));
  }

  get watchLeader(): ElectionBackend['watchLeader'] {
    const side = this.single();
    if (!supports(side, 'leaderPush')) return undefined;
    return (election, onChange) => {
      validate(election);
      return side.watchLeader!(election, onChange);
    };
  }

  get isWatching(): ElectionBackend['isWatching'] {
    // Never without `watch` (see `watch`: the sides that push).
    const sides = (this.phase === 'dual' ? [this.from, this.to] : [this.single()]).filter((b) => supports(b, 'push'));
    if (!sides.some((b) => b.isWatching)) return undefined;
    return (election, candidateId) => sides.every((b) => !b.isWatching || b.isWatching(election, candidateId));
  }

  get raiseTokenFloor(): ElectionBackend['raiseTokenFloor'] {
    if (this.phase === 'dual') return undefined;
    const side = this.single();
    return supports(side, 'tokenFloor') ? (election, token) => side.raiseTokenFloor!(election, token) : undefined;
  }

  async close(): Promise<void> {
    this.terms.clear();
    this.ledFrom.clear();
    this.ledTo.clear();
    this.toBusy.clear();
    this.campaigning.clear();
    this.oldLeaders.clear();
    if (this.closeBackends) await Promise.all([this.from.close(), this.to.close()]);
  }

  /** `await using backend = new MigratingBackend(…)`: closes it (both sides, with `closeBackends`) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** The one backend used outside `dual`. */
  private single(): ElectionBackend {
    return this.phase === 'to-only' ? this.to : this.from;
  }
}

function dualCapabilities(from: ElectionBackend, to: ElectionBackend): BackendCapabilities {
  const pushes = [from, to].map((b) => capabilityOf(b, 'push'));
  const push = pushes.every((p) => p === 'reliable') ? 'reliable' : pushes.some((p) => p !== 'none') ? 'best-effort' : 'none';
  // Observers follow `from` in dual, as `getLeader` does.
  const leaderPush = capabilityOf(from, 'leaderPush');
  const [a, b] = [capabilityOf(from, 'leaderMetadata'), capabilityOf(to, 'leaderMetadata')];
  const leaderMetadata = {
    value: a.value && b.value,
    since: a.since && b.since,
    renewedAt: a.renewedAt && b.renewedAt,
    leaseEndsAt: a.leaseEndsAt && b.leaseEndsAt,
    transitions: a.transitions && b.transitions,
  };
  return { listCandidates: capabilityOf(from, 'listCandidates'), push, leaderPush, tokenFloor: false, leaderMetadata };
}

/** `info` without the metadata fields `kept` does not declare. */
function keepDeclared(info: LeaderInfo, kept: LeaderMetadataCapabilities): LeaderInfo {
  const out: LeaderInfo = { ...info };
  for (const field of Object.keys(kept) as Array<keyof LeaderMetadataCapabilities>) {
    if (!kept[field]) delete out[field];
  }
  return out;
}

// A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
function validate(election: string, ...candidate: [candidateId?: string]): void {
  assertElectionName(election, KIND);
  if (candidate.length > 0) assertInstanceId(candidate[0], KIND, election);
}

function termKey(election: string, candidateId: string): string {
  return `${election}\u0000${candidateId}`;
}

/**
 * Waits for `previous` (never rejects); rejects with BACKEND_UNAVAILABLE, having sent nothing,
 * when the caller gives up first (its signal aborts, or its deadline passes).
 */
async function turnOrGiveUp(previous: Promise<void>, request: CampaignRequest): Promise<void> {
  const { signal, deadlineMs, election } = request;
  const gaveUp = new ConclaveError('BACKEND_UNAVAILABLE', 'campaign not sent: an earlier campaign of this candidate is still running', {
    backend: KIND,
    election,
  });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const givenUp = new Promise<boolean>((resolve) => {
    if (deadlineMs !== undefined) timer = setTimeout(() => resolve(true), Math.max(0, deadlineMs - performance.now()));
    if (signal) {
      onAbort = () => resolve(true);
      if (signal.aborted) resolve(true);
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    if (await Promise.race([previous.then(() => false), givenUp])) throw gaveUp;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The caller's deadline and signal, for the calls that carry out its request on each side (never
 * for give-backs of our own, which must go out whether or not the caller still waits).
 */
function timingOf(request: RenewRequest | ReleaseRequest): Pick<ReleaseRequest, 'signal' | 'deadlineMs'> {
  return {
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.deadlineMs === undefined ? {} : { deadlineMs: request.deadlineMs }),
  };
}

/** Waits for `promise` and ignores its outcome (a best-effort give-back). */
async function settle(promise: Promise<unknown>): Promise<void> {
  await promise.catch(() => undefined);
}
