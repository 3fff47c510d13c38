import type { ElectionBackend, ReleaseRequest, RenewRequest, RenewResult } from '@conclave/core/spi';
import type { DualState } from './dual-state';
import { termKey, throwFirstFailure, timingOf, validate } from './side-requests';

/**
 * Keeping a dual term and giving it back: a renewal renews both sides, and losing either side
 * ends the term; a release gives both sides back, each whatever the other does.
 */
export class DualLease {
  constructor(
    private readonly from: ElectionBackend,
    private readonly to: ElectionBackend,
    private readonly state: DualState,
  ) {}

  async renew(request: RenewRequest): Promise<RenewResult> {
    const { election, candidateId, token, leaseMs } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.state.terms.get(key);
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
      await this.state.dropTerm(key, held, { election, candidateId }, ...others);
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
    const { election, candidateId, token } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.state.terms.get(key);
    // A release for an older term than the one we hold must not touch the newer term's `from`.
    const sameTerm = token == null || held?.toToken === token;
    if (sameTerm) this.state.terms.delete(key);
    this.state.toBusy.delete(key);
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
    throwFirstFailure(results);
  }
}
