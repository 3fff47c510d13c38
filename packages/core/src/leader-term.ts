import { performance } from 'node:perf_hooks';
import type { BackendCalls } from './backend-calls';
import { ConclaveError } from './errors';
import { afterRenewFailed, afterRenewed, mustStepDown, nextRenewal, renewInterval, renewTimeoutMs, usableLeaseMs } from './elector-pacing';
import type { ElectorSetup, Standing, Term } from './elector-standing';
import type { RevokeReason } from './elector-types';
import { candidateOfNullable } from './instance-id';
import type { LeaderTasks } from './leader-tasks';
import type { LeadershipSignals } from './leadership-signals';
import type { StepRunner } from './step-runner';

/** What the leader's side of an Elector works with (elector.ts wires it). */
export interface LeaderTermParts {
  setup: ElectorSetup;
  standing: Standing;
  signals: LeadershipSignals;
  calls: BackendCalls;
  steps: StepRunner;
  tasks: LeaderTasks;
  /** Releases the term of `token` once the call in flight has returned. */
  releaseAfterCurrent(token: number | null): Promise<void>;
}

/**
 * The leader's side of an Elector: begins a term, renews it, and ends it — at its deadline on the
 * monotonic clock whether or not the backend ever answers, when the backend says it is lost, or
 * when the Elector gives it up.
 */
export class LeaderTerm {
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** The term and the deadline the timer was armed for. */
  private armedTerm: Term | null = null;
  private armedAt = 0;

  constructor(private readonly parts: LeaderTermParts) {}

  /** The term while this Elector leads and its deadline has not passed; else `null`. */
  current(): Term | null {
    const { role, term } = this.parts.standing;
    return role === 'leader' && term !== null && performance.now() < term.deadline ? term : null;
  }

  /** Takes the term a campaign won: `deadline` on our clock, `usableMs` of lease. */
  begin(token: number, deadline: number, usableMs: number): void {
    const { setup, standing, signals, steps, tasks } = this.parts;
    standing.epoch++;
    standing.role = 'leader';
    standing.lastToken = token;
    const term: Term = {
      token,
      deadline,
      renewEveryMs: renewInterval(usableMs, setup.options),
      leaseMs: usableMs,
      controller: new AbortController(),
    };
    standing.term = term;
    this.setDeadline(term, deadline);
    signals.publish({ role: 'leader', leaderId: setup.candidateId, token });
    setup.log.info({ ...setup.context(), token }, 'elected');
    signals.elected({ token, reason: 'acquired' });
    // Read the clock again: the subscribers above run synchronously and may take a while.
    steps.follow(nextRenewal({ nowMs: performance.now(), deadlineMs: deadline, renewEveryMs: term.renewEveryMs }));
    tasks.runAll(term, () => standing.term === term);
  }

  async renewOnce(): Promise<void> {
    const { setup, standing, calls, steps } = this.parts;
    const { backend, election, instanceId, options } = setup;
    const term = standing.term!;
    const sentAt = performance.now();
    if (mustStepDown(sentAt, term.deadline)) {
      this.revoke('lease-expired');
      return;
    }
    const epoch = standing.epoch;
    const { leaseMs } = options;
    try {
      const result = await calls.timed(
        'renew',
        (timing) => backend.renew({ election, candidateId: instanceId, token: term.token, leaseMs, ...timing }),
        renewTimeoutMs(sentAt, term.deadline),
        'renew timed out',
      );
      if (epoch !== standing.epoch) return;
      calls.succeeded();
      const now = performance.now();
      if (mustStepDown(now, term.deadline)) {
        // The answer came after the deadline, before the deadline timer ran (a stalled loop):
        // isLeader() has already said false, and a term that ended does not come back.
        this.revoke('lease-expired');
        return;
      }
      if (result.held) {
        const renewed = afterRenewed({ sentAtMs: sentAt, grantedMs: result.leaseMs, deadlineMs: term.deadline }, options);
        if (renewed.extended) this.setDeadline(term, renewed.deadlineMs);
        term.renewEveryMs = renewed.renewEveryMs;
        term.leaseMs = usableLeaseMs(result.leaseMs, options.leaseMs);
        steps.follow(nextRenewal({ nowMs: now, deadlineMs: term.deadline, renewEveryMs: term.renewEveryMs }));
      } else {
        this.revoke('lease-lost', candidateOfNullable(result.leaderId));
      }
    } catch (err) {
      if (epoch !== standing.epoch) return;
      calls.failed('renew', err);
      steps.follow(afterRenewFailed({ nowMs: performance.now(), deadlineMs: term.deadline }, options));
    }
  }

  /**
   * Ends the current term locally, at once: isLeader() is false when this returns. `next` is the
   * role that follows: `stopped` for stop(), so that state$ goes from leader straight to stopped.
   */
  revoke(reason: RevokeReason, leaderId: string | null = null, next: 'follower' | 'stopped' = 'follower'): void {
    const { setup, standing, signals, calls, steps } = this.parts;
    const term = standing.term;
    if (standing.role !== 'leader' || !term) return;
    standing.epoch++;
    standing.role = next;
    standing.term = null;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
    this.armedTerm = null;
    signals.publish({ role: next, leaderId, token: null, reason });
    // A renewal that could not be confirmed in time: the backend is out of reach for our purpose.
    if (reason === 'lease-expired') calls.gaveUpOnLease();
    const log = reason === 'lease-expired' ? setup.log.warn : setup.log.info;
    log.call(setup.log, { ...setup.context(), token: term.token, reason }, 'leadership revoked');
    term.controller.abort(new ConclaveError('LEASE_LOST', `leadership ended: ${reason}`, { election: setup.election }));
    signals.revoked({ token: term.token, reason });
    if (reason === 'lease-expired') {
      // We could not confirm the lease in time; let it go on the server if we still can, so the
      // next leader need not wait for it to expire, then campaign again.
      void this.parts.releaseAfterCurrent(term.token).then(() => {
        if (standing.role === 'follower') steps.schedule(0);
      });
    } else if (reason === 'lease-lost') {
      steps.schedule(0);
    }
  }

  /**
   * Arms the timer that ends `term` at `deadline`, should no renewal move it first. A timer armed
   * already for no later than `deadline` stays: when it fires it arms the next one for the
   * deadline as it is then (a timer per renewal is a large part of a leader of thousands' work).
   */
  private setDeadline(term: Term, deadline: number): void {
    const { standing } = this.parts;
    term.deadline = deadline;
    if (this.deadlineTimer && this.armedTerm === term && this.armedAt <= deadline) return;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.armedTerm = term;
    this.armedAt = deadline;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      if (standing.term === term && mustStepDown(performance.now(), term.deadline)) this.revoke('lease-expired');
      else if (standing.term === term) this.setDeadline(term, term.deadline);
    }, Math.max(0, deadline - performance.now()));
  }
}
