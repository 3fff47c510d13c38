import {
  assertReleaseBounds,
  assertRequestToken,
  leaderMetadataOf,
  type BackendAdmin,
  type CampaignRequest,
  type CampaignResult,
  type CandidateQueue,
  type ChangeFeed,
  type ElectionBackend,
  type LeaderFeed,
  type LeaderInfo,
  type LeaderMetadataKept,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type TokenFloor,
} from '@conclave/core/spi';
import {
  adminOf,
  candidatesOf,
  changesOf,
  leaderChangesOf,
  leaderMetadataOfPair,
  single,
  staleLeaderMsOf,
  tokenFloorOf,
} from './pair-parts';
import { DualAdmin } from './dual-admin';
import { DualCampaign } from './dual-campaign';
import { DualLease } from './dual-lease';
import { DualState } from './dual-state';
import { resolveMigratingOptions, type MigratingBackendOptions, type MigrationPhase } from './migration-options';
import { OldLeaderWatch } from './old-leader-watch';
import { KIND } from './side-requests';
import { ToOnlyCampaign } from './to-only-campaign';

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
 * raises `to`'s token floor to its `from` token − 1 (`tokenFloor.raise`). While `to` is fresh (the
 * usual case: only dual nodes have used it), a dual term's token therefore *equals* its `from`
 * token, so dual and `from-only` nodes share `from`'s increasing sequence; once `to-only` nodes
 * take part, every leader holds `to` and `to`'s sequence increases by itself. A dual term never
 * goes on with a new `to` term under an old `from` term (its token could run ahead of what
 * `from` issues next); it starts afresh on both sides instead. After taking `to`,
 * a dual candidate also raises `from`'s floor to its token where `from` supports it, so a
 * rollback to `from-only` keeps increasing too. See the README for the rule this relies on at
 * the dual → to-only step, and for pairs whose `to` cannot raise its floor.
 *
 * Each call goes where the phase sends it: outside `dual` to the one side in use (to-only through
 * ToOnlyCampaign, which keeps the forbidden mix from making two leaders); in `dual` to
 * DualCampaign (the campaign and its token rules), DualLease (renew, release) and DualAdmin
 * (getLeader, forceLeader, clearLeader); pair-parts.ts says which parts the pair has.
 */
export class MigratingBackend implements ElectionBackend {
  readonly kind = KIND;
  readonly admin: BackendAdmin | undefined;
  readonly candidates: CandidateQueue | undefined;
  readonly changes: ChangeFeed | undefined;
  readonly leaderChanges: LeaderFeed | undefined;
  readonly tokenFloor: TokenFloor | undefined;
  readonly leaderMetadata: LeaderMetadataKept | undefined;
  /** This process's phase of the migration. */
  readonly phase: MigrationPhase;
  /** The backend the election is moving away from. */
  readonly from: ElectionBackend;
  /** The backend the election is moving to. */
  readonly to: ElectionBackend;

  private readonly closeBackends: boolean;
  /** What this backend's candidates hold and have held in `dual`. */
  private readonly dual: DualState;
  private readonly dualCampaign: DualCampaign;
  private readonly dualLease: DualLease;
  private readonly dualAdmin: DualAdmin;
  /** to-only: what is known of `from`'s leader (see OldLeaderWatch). */
  private readonly oldLeaders: OldLeaderWatch;
  private readonly toOnly: ToOnlyCampaign;

  /** Throws `INVALID_OPTIONS` for bad options; does no I/O. */
  constructor(options: MigratingBackendOptions) {
    const resolved = resolveMigratingOptions(options);
    this.from = resolved.from;
    this.to = resolved.to;
    this.phase = resolved.phase;
    this.closeBackends = resolved.closeBackends;
    this.dual = new DualState(this.from, this.to);
    this.dualCampaign = new DualCampaign(this.from, this.to, this.dual);
    this.dualLease = new DualLease(this.from, this.to, this.dual);
    this.dualAdmin = new DualAdmin(this.from, this.to, () => leaderMetadataOf(this));
    this.oldLeaders = new OldLeaderWatch(this.from, this.to.kind);
    this.toOnly = new ToOnlyCampaign(this.to, this.oldLeaders);
    this.admin = adminOf(this, this.dualAdmin);
    this.candidates = candidatesOf(this);
    this.changes = changesOf(this, this.dual);
    this.leaderChanges = leaderChangesOf(this);
    this.tokenFloor = tokenFloorOf(this);
    this.leaderMetadata = leaderMetadataOfPair(this);
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    if (this.phase === 'to-only') return this.toOnly.campaign(request);
    if (this.phase !== 'dual') return single(this).campaign(request);
    return this.dualCampaign.campaign(request);
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    // Checked here, not left to the sides: a dual lease is looked up by its token first.
    assertRequestToken(request.token, KIND, request.election);
    if (this.phase === 'to-only') return this.toOnly.renew(request);
    if (this.phase !== 'dual') return single(this).renew(request);
    return this.dualLease.renew(request);
  }

  async release(request: ReleaseRequest): Promise<void> {
    assertReleaseBounds(request.token, request.notAbove, KIND, request.election);
    if (this.phase !== 'dual') return single(this).release(request);
    return this.dualLease.release(request);
  }

  /**
   * In `dual`, the leader that acts: whoever holds `to`, else `from`'s; both sides are read, and
   * either failing fails the answer (see DualAdmin). Otherwise the side in use's.
   */
  async getLeader(election: string): Promise<LeaderInfo | null> {
    if (this.phase !== 'dual') return single(this).getLeader(election);
    return this.dualAdmin.getLeader(election);
  }

  /** The longer of the sides' (a ZooKeeper side's follows its session). */
  get staleLeaderMs(): number | undefined {
    return staleLeaderMsOf(this);
  }

  async close(): Promise<void> {
    this.dual.clear();
    this.dualCampaign.clear();
    this.oldLeaders.clear();
    if (this.closeBackends) await Promise.all([this.from.close(), this.to.close()]);
  }

  /** `await using backend = new MigratingBackend(…)`: closes it (both sides, with `closeBackends`) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
