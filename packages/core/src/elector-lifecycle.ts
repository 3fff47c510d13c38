import { performance } from 'node:perf_hooks';
import type { BackendCalls } from './backend-calls';
import type { Campaigner } from './campaigner';
import type { DuplicateLeader } from './duplicate-leader';
import { afterStepDown, stepDownHoldOffUntil } from './elector-pacing';
import type { ElectorSetup, Standing } from './elector-standing';
import type { Role } from './elector-types';
import type { LeaderTerm } from './leader-term';
import type { LeadershipSignals } from './leadership-signals';
import type { ElectorMetrics } from './metrics';
import type { PushWatch } from './push-watch';
import type { StepRunner } from './step-runner';

/** What the lifecycle of an Elector works with (elector.ts wires it). */
export interface LifecycleParts {
  setup: ElectorSetup;
  standing: Standing;
  signals: LeadershipSignals;
  metrics: ElectorMetrics;
  calls: BackendCalls;
  steps: StepRunner;
  term: LeaderTerm;
  campaigner: Campaigner;
  push: PushWatch;
  duplicate: DuplicateLeader;
  /** Releases the term of `token` (or the candidacy) once the call in flight has returned. */
  releaseAfterCurrent(token: number | null): Promise<void>;
}

/**
 * Starting and stopping an Elector's campaign: `start`, `stop`, `pause`, `resume` and `stepDown`
 * (their contracts are documented on Elector). Whatever ends a term here also releases it, so the
 * next leader need not wait for the lease to expire.
 */
export class ElectorLifecycle {
  private stopping: Promise<void> | null = null;
  private unobserveLease: (() => void) | null = null;

  constructor(private readonly parts: LifecycleParts) {}

  start(): Promise<void> {
    const { setup, standing, signals, metrics, calls, steps, term, campaigner, push } = this.parts;
    if (standing.role !== 'stopped') return Promise.resolve();
    if (this.stopping) return this.stopping.then(() => this.start());
    standing.role = 'follower';
    standing.epoch++;
    calls.restart();
    this.unobserveLease = metrics.observeLease(() => {
      const current = term.current();
      return current ? current.deadline - performance.now() : null;
    });
    signals.publish({ role: 'follower', leaderId: null, token: null });
    setup.log.info(setup.context(), 'campaign started');
    push.start();
    const first = campaigner.awaitFirstOutcome();
    steps.schedule(0);
    return first;
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.parts.standing.role === 'stopped') return Promise.resolve();
    this.stopping = this.shutDown().finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  async stepDown(): Promise<void> {
    const { setup, standing, steps, term } = this.parts;
    if (standing.role !== 'leader') return;
    const token = standing.term!.token;
    standing.holdOffUntil = stepDownHoldOffUntil(performance.now(), setup.options);
    term.revoke('stepped-down');
    await this.parts.releaseAfterCurrent(token);
    if (this.currentRole() === 'follower') {
      steps.follow(afterStepDown({ nowMs: performance.now(), holdOffUntilMs: standing.holdOffUntil }));
    }
  }

  pause(): void {
    const { setup, standing, signals, steps, term } = this.parts;
    if (standing.role === 'stopped' || standing.role === 'paused') return;
    const token = standing.term?.token ?? null;
    if (standing.role === 'leader') term.revoke('paused');
    standing.role = 'paused';
    standing.epoch++;
    steps.cancel();
    const { leaderId, token: leaderToken, reason } = signals.state;
    signals.publish({ role: 'paused', leaderId, token: leaderToken, reason });
    setup.log.info(setup.context(), 'campaign paused');
    void this.parts.releaseAfterCurrent(token);
  }

  resume(): void {
    const { setup, standing, signals, steps } = this.parts;
    if (standing.role !== 'paused') return;
    standing.role = 'follower';
    standing.epoch++;
    signals.publish({ role: 'follower', leaderId: signals.state.leaderId, token: signals.state.token });
    setup.log.info(setup.context(), 'campaign resumed');
    steps.schedule(0);
  }

  private async shutDown(): Promise<void> {
    const { setup, standing, signals, calls, steps, term, campaigner, push, duplicate } = this.parts;
    const token = standing.term?.token ?? null;
    if (standing.role === 'leader') term.revoke('stopped', null, 'stopped');
    standing.role = 'stopped';
    standing.epoch++;
    steps.cancel();
    this.unobserveLease?.();
    this.unobserveLease = null;
    calls.forget();
    campaigner.settleFirstOutcome();
    // The role changes when stop() is called, not when the release returns: nothing campaigns
    // from here on, and waiters (waitForLeadership) learn it at once.
    signals.publish({ role: 'stopped', leaderId: null, token: null });
    // Release before unwatching: a backend may tie its wake-up channel to the subscription, and
    // followers should be woken by the release itself.
    await this.parts.releaseAfterCurrent(token);
    push.stop();
    standing.holdOffUntil = 0;
    duplicate.forget();
    setup.log.info(setup.context(), 'campaign stopped');
  }

  /** Read through a method so TypeScript does not narrow it across awaits. */
  private currentRole(): Role {
    return this.parts.standing.role;
  }
}
