import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import {
  withTimeout,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type RenewResult,
} from '@conclave/core/spi';
import { CampaignTurns } from './campaign-turns';
import type { DualState, DualTerm } from './dual-state';
import { KIND, settle, termKey, validate } from './side-requests';

/** A campaign round that must be made again (see `campaign`). */
const RETRY = Symbol('retry');

/**
 * A campaign in `dual`, and the token rules it keeps. A dual term is one `from` term and one `to`
 * term: a candidate that cannot take `to` gives `from` back at once (old candidates lead
 * meanwhile), and losing either side gives the other back at once.
 *
 * Fencing tokens: a dual term's token is `to`'s token, and before taking `to` a dual candidate
 * raises `to`'s token floor to its `from` token − 1 (`tokenFloor.raise`). While `to` is fresh, a
 * dual term's token therefore *equals* its `from` token, so dual and `from-only` nodes share
 * `from`'s increasing sequence. A dual term never goes on with a new `to` term under an old
 * `from` term (its token could run ahead of what `from` issues next); it starts afresh on both
 * sides instead. After taking `to`, a dual candidate also raises `from`'s floor to its token
 * where `from` supports it, so a rollback to `from-only` keeps increasing too.
 */
export class DualCampaign {
  private readonly turns = new CampaignTurns();

  constructor(
    private readonly from: ElectionBackend,
    private readonly to: ElectionBackend,
    private readonly state: DualState,
  ) {}

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const { election, candidateId } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    return this.turns.take(key, request, async () => {
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
    });
  }

  /** Forgets the campaigns under way (on close). */
  clear(): void {
    this.turns.clear();
  }

  /**
   * One dual campaign. A dual term is one `from` term and one `to` term taken together; when
   * either ends, both are given up, and the next dual term starts a fresh term on both sides.
   * So a dual term's token never runs ahead of what `from` issues next (see the README), and a
   * candidate that cannot lead on `to` never sits on `from`'s lease (old candidates lead).
   */
  private async campaignDual(request: CampaignRequest, key: string): Promise<CampaignResult | typeof RETRY> {
    const { election, candidateId } = request;
    const held = this.state.terms.get(key);
    const busy = held ? undefined : this.state.toBusy.get(key);
    if (busy) {
      // `to` told us lately that another candidate holds it: taking `from` now would only give
      // it back at once (and wake the next candidate to do the same, round and round). Answer as
      // `to` did until its lease can end, or until `to` pushes a change (see `watch`).
      const left = Math.ceil(busy.until - performance.now());
      if (left > 0) return { ...busy.answer, leaseRemainingMs: left };
      this.state.toBusy.delete(key);
    }
    let onFrom: CampaignResult;
    try {
      onFrom = await this.from.campaign(request);
    } catch (err) {
      if (held) await this.state.dropTerm(key, held, { election, candidateId }, 'to');
      throw err;
    }
    if (onFrom.role === 'follower') {
      // We lost `from`: give `to` back at once rather than block the next dual leader for a lease.
      if (held) await this.state.dropTerm(key, held, { election, candidateId }, 'to');
      return onFrom;
    }
    const fromToken = onFrom.token;
    const joining = held !== undefined && held.fromToken === fromToken;
    if (held && !joining) {
      // `from` is in a new term while an older one is recorded: that `to` term is over too.
      await this.state.dropTerm(key, held, { election, candidateId }, 'to');
    }
    if (!joining && fromToken <= (this.state.ledFrom.get(key) ?? 0)) {
      // `from` still holds a term we led with and gave up (its release was lost or failed).
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      return RETRY;
    }
    if (joining) return this.goOn(request, key, held!, onFrom);
    let onTo: CampaignResult;
    const toFloor = joining ? undefined : this.to.tokenFloor;
    const toFloorRaised = toFloor !== undefined;
    try {
      if (toFloor) await toFloor.raise(election, Math.max(0, fromToken - 1));
      onTo = await this.campaignTo(request, key);
    } catch (err) {
      // `to` cannot be reached: give up our place on `from` so that a from-only candidate can
      // lead meanwhile; the next campaign takes it again.
      this.state.terms.delete(key);
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      throw err;
    }
    if (onTo.role === 'follower') {
      // Someone else holds `to` (a to-only node, or a dual node on its way out): we cannot lead,
      // so we do not keep `from` either.
      this.state.terms.delete(key);
      const waitMs = onTo.leaseRemainingMs ?? Math.floor(request.leaseMs / 3);
      this.state.toBusy.set(key, { until: performance.now() + waitMs, answer: onTo });
      await settle(this.from.release({ election, candidateId, token: fromToken }));
      return onTo;
    }
    const toToken = onTo.token;
    if ((!joining && toToken <= (this.state.ledTo.get(key) ?? 0)) || (toFloorRaised && toToken < fromToken)) {
      // `to` still holds a term we led with and gave up (its release failed), or a term that
      // started before the floor was raised (a lease forced on `to` alone, below what `from` has
      // issued since): give it back and look again, for a fresh term.
      await settle(this.to.release({ election, candidateId, token: toToken }));
      return RETRY;
    }
    const fromFloor = joining ? undefined : this.from.tokenFloor;
    if (fromFloor) {
      try {
        await fromFloor.raise(election, toToken);
      } catch (err) {
        await Promise.allSettled([
          this.to.release({ election, candidateId, token: toToken }),
          this.from.release({ election, candidateId, token: fromToken }),
        ]);
        throw err;
      }
    }
    this.state.record(key, { fromToken, toToken });
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
      await this.state.dropTerm(key, held, { election, candidateId }, 'from');
      throw err;
    }
    if (!onTo.held) {
      await this.state.dropTerm(key, held, { election, candidateId }, 'from');
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
          if (late.role === 'leader' && this.state.terms.get(key)?.toToken !== late.token) {
            void settle(this.to.release({ election, candidateId, token: late.token }));
          }
        },
        () => undefined,
      );
      throw err;
    }
  }

  /** `call`, or BACKEND_UNAVAILABLE when `to` has not answered it within half the lease. */
  private withinHalfLease<T>(call: Promise<T>, request: { election: string; leaseMs: number }, what: string): Promise<T> {
    return withTimeout(
      call,
      Math.max(1, Math.floor(request.leaseMs / 2)),
      () => new ConclaveError('BACKEND_UNAVAILABLE', `${this.to.kind} did not answer the ${what} in time`, { backend: KIND, election: request.election }),
    );
  }
}
