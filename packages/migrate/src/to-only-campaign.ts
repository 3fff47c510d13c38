import { ConclaveError } from '@conclave/core';
import type { CampaignRequest, CampaignResult, ElectionBackend, RenewRequest, RenewResult } from '@conclave/core/spi';
import type { OldLeaderWatch } from './old-leader-watch';
import { KIND, settle, validate } from './side-requests';

/** How long a new term waits at most for a look at `from` (see OldLeaderWatch). */
const FROM_LOOK_WAIT_MS = 1000;

/**
 * to-only: the forbidden mix.
 *
 * Old `from`-only nodes beside `to-only` nodes share no lease. A to-only candidate keeps that
 * mix from making two leaders where it can (OldLeaderWatch): it starts no term on `to` while
 * `from` shows a leader or has yet to answer whether it does, and once the same `from` term has
 * lasted longer than a dead candidate can be shown (an old node, not a dual one passing through
 * nor a dead one) it refuses to lead at all (MIGRATION_CONFLICT, which the Elector logs as an
 * error and reports in health()) until `from` shows no leader or another term. A to-only leader
 * keeps looking at `from` while it renews, and gives `to` back once the same `from` term has
 * lasted a lease: an old node started beside it leads at once, and overlaps it until then.
 */
export class ToOnlyCampaign {
  constructor(
    private readonly to: ElectionBackend,
    private readonly oldLeaders: OldLeaderWatch,
  ) {}

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
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
    const waitMs = Math.min(leaseMs / 4, FROM_LOOK_WAIT_MS);
    const onFrom = await this.oldLeaders.leaderBeforeTerm(election, leaseMs, waitMs);
    if (!onFrom) return result; // no leader on `from`, or `from` unknown (gone or down)
    await settle(this.to.release({ election, candidateId, token: result.token }));
    // `from` has not answered yet: no term until it does (or fails); campaign again soon.
    if (onFrom === 'looking') return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: Math.ceil(waitMs) };
    const found = this.oldLeaders.conflict(election);
    if (found) throw new ConclaveError('MIGRATION_CONFLICT', found, { backend: KIND, election });
    // An old node, or a dual one passing through `from`'s head: look again in half a lease.
    return { role: 'follower', leaderId: onFrom.candidateId, token: onFrom.token, leaseRemainingMs: Math.ceil(leaseMs / 2) };
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
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
}
