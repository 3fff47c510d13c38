import { performance } from 'node:perf_hooks';
import type { CampaignResult } from './backend';
import type { BackendCalls } from './backend-calls';
import { capabilityOf, supports } from './capabilities';
import { isPermanentError } from './errors';
import type { DuplicateLeader } from './duplicate-leader';
import {
  afterStaleTerm,
  campaignBackoff,
  campaignTimeoutMs,
  judgeGrant,
  leaseDeadline,
  nextCampaign,
  usableLeaseMs,
  type PacingDecision,
} from './elector-pacing';
import type { ElectorSetup, Standing } from './elector-standing';
import { candidateOfNullable } from './instance-id';
import type { LeaderTerm } from './leader-term';
import type { LeadershipSignals } from './leadership-signals';
import type { PushWatch } from './push-watch';
import type { StepRunner } from './step-runner';

/** What the follower's side of an Elector works with (elector.ts wires it). */
export interface CampaignerParts {
  setup: ElectorSetup;
  standing: Standing;
  signals: LeadershipSignals;
  calls: BackendCalls;
  steps: StepRunner;
  term: LeaderTerm;
  push: PushWatch;
  duplicate: DuplicateLeader;
}

/**
 * The follower's side of an Elector: one campaign call at a time, and what its answer leads to —
 * a term, a term given back, or the next campaign, when elector-pacing.ts says. Also settles the
 * promise `start()` returns, on the first outcome.
 */
export class Campaigner {
  private firstOutcome: { resolve(): void; reject(err: unknown): void } | null = null;

  constructor(private readonly parts: CampaignerParts) {}

  /**
   * A promise that settles on the first outcome of the campaigns from now on: it rejects when
   * that outcome is an error saying the configuration can never work (see `isPermanentError`),
   * and then no campaign follows; it resolves on any other outcome.
   */
  awaitFirstOutcome(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.firstOutcome = { resolve, reject };
    });
  }

  /** The first outcome is known (or there will be none: stopped). */
  settleFirstOutcome(): void {
    const first = this.firstOutcome;
    this.firstOutcome = null;
    first?.resolve();
  }

  async campaignOnce(): Promise<void> {
    const { setup, standing, signals, calls, steps, term, push, duplicate } = this.parts;
    const { backend, election, instanceId, options, log } = setup;
    const epoch = standing.epoch;
    const { leaseMs, safetyMarginMs, value } = options;
    const sentAt = performance.now();
    let result: CampaignResult;
    try {
      result = await calls.timed(
        'campaign',
        (timing) =>
          backend.campaign({ election, candidateId: instanceId, leaseMs, ...(value === undefined ? {} : { value }), ...timing }),
        campaignTimeoutMs(options),
        'campaign timed out',
      );
    } catch (err) {
      if (epoch !== standing.epoch) return;
      const first = this.firstOutcome;
      if (first && !calls.answered && isPermanentError(err)) {
        // Never answered otherwise since start(): a configuration that cannot work, which
        // retrying would only hide. start() rejects with it (and stops) rather than retry.
        this.firstOutcome = null;
        first.reject(err);
        return;
      }
      calls.failed('campaign', err);
      this.settleFirstOutcome();
      steps.follow(this.backoff());
      return;
    }
    if (epoch !== standing.epoch) {
      // We were paused or stopped meanwhile; their release covers a lease this answer granted.
      return;
    }
    calls.succeeded();
    if (result.role === 'leader') {
      const usable = usableLeaseMs(result.leaseMs, leaseMs);
      const deadline = leaseDeadline(sentAt, usable, safetyMarginMs);
      const now = performance.now();
      const grant = judgeGrant({ nowMs: now, token: result.token, lastToken: standing.lastToken, deadlineMs: deadline });
      if (grant === 'stale-term') {
        // The server still holds our previous term, which we already gave up locally. Leading it
        // again would repeat a token; release it and take a fresh term instead.
        log.debug({ ...setup.context(), token: result.token }, 'releasing a term already given up');
        await calls.release(result.token);
        const canRaiseTokenFloor = supports(backend, 'tokenFloor');
        if (canRaiseTokenFloor) {
          // A server that lost its counter (a restart without persistence) would hand out old
          // tokens for a while: lift it past ours instead of looping until it gets there.
          await backend.raiseTokenFloor!(election, standing.lastToken!).catch((err: unknown) => {
            log.warn({ ...setup.context(), err }, 'could not raise the token floor');
          });
        }
        steps.follow(afterStaleTerm({ canRaiseTokenFloor }, options));
      } else if (grant === 'too-late') {
        log.warn({ ...setup.context(), token: result.token }, 'lease granted too late to use; releasing it');
        await calls.release(result.token);
        steps.follow(this.backoff());
      } else {
        // We lead now: no duplicate of ours does.
        duplicate.notice(null);
        term.begin(result.token, deadline, usable);
      }
    } else {
      const leaderId = candidateOfNullable(result.leaderId);
      if (leaderId !== signals.state.leaderId || result.token !== signals.state.token) {
        signals.publish({ role: 'follower', leaderId, token: result.token, reason: signals.state.reason });
      }
      duplicate.notice(result.leaderId);
      const namedSelf = result.leaderId === instanceId;
      if (namedSelf) {
        // A stale node or row of ours; pacing looks again at retryMs.
        log.warn({ ...setup.context() }, 'backend reports this candidate as leader without a lease');
      }
      steps.follow(
        nextCampaign(
          {
            nowMs: performance.now(),
            leaseRemainingMs: result.leaseRemainingMs,
            push: capabilityOf(backend, 'push'),
            // Pacing ignores push for a record naming us, so do not ask the backend then.
            watching: !namedSelf && push.active(),
            namedSelf,
            holdOffUntilMs: standing.holdOffUntil,
          },
          options,
        ),
      );
      // A pushed lease end may move this look (not the retryMs look at a record naming us).
      steps.leaseEndLook = !namedSelf;
    }
    this.settleFirstOutcome();
  }

  /** The next campaign after a failure; the random draw spreads candidates out. */
  private backoff(): PacingDecision {
    return campaignBackoff({ failures: this.parts.calls.failures, jitter: Math.random() }, this.parts.setup.options);
  }
}
