import { performance } from 'node:perf_hooks';
import type { BackendCalls } from './backend-calls';
import type { Campaigner } from './campaigner';
import type { DuplicateLeader } from './duplicate-leader';
import { afterStepDown, stepDownHoldOffUntil } from './elector-pacing';
import type { ElectorSetup, Standing, Term } from './elector-standing';
import type { Role } from './elector-types';
import type { LeaderTerm } from './leader-term';
import type { LeadershipSignals } from './leadership-signals';
import type { ElectorMetrics } from './metrics';
import type { PushWatch } from './push-watch';
import type { StepRunner } from './step-runner';
import { termWorkSettled } from './term-work';

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
 * (their contracts are documented on Elector). Whatever ends a term here also releases it, once
 * the term's work has ended, so the next leader need not wait for the lease to expire.
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
    return first.catch((err: unknown) => this.refusedAtStart(err));
  }

  stop(): Promise<void> {
    return this.halt(true);
  }

  /**
   * The first campaign was refused for good (a wrong password, an unknown database): stop, and
   * reject start() with the error. The rejection is what tells the caller; the log says it once
   * at info (an error line as well would report it twice). Nothing is released: the server
   * granted nothing, and would refuse the release too.
   */
  private async refusedAtStart(err: unknown): Promise<never> {
    const { setup } = this.parts;
    setup.log.info({ ...setup.context(), err }, 'start failed: the backend refuses this configuration; stopped');
    await this.halt(false);
    throw err;
  }

  private halt(release: boolean): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.parts.standing.role === 'stopped') return Promise.resolve();
    this.stopping = this.shutDown(release).finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  async stepDown(): Promise<void> {
    const { standing, term } = this.parts;
    const current = standing.term;
    if (standing.role !== 'leader' || !current) return;
    term.revoke('stepped-down');
    await this.handOver(current, true);
  }

  pause(): void {
    const { setup, standing, signals, steps, term } = this.parts;
    if (standing.role === 'stopped' || standing.role === 'paused') return;
    const current = standing.role === 'leader' ? standing.term : null;
    if (current) term.revoke('paused');
    standing.role = 'paused';
    standing.epoch++;
    steps.cancel();
    const { leaderId, token: leaderToken, reason } = signals.state;
    signals.publish({ role: 'paused', leaderId, token: leaderToken, reason });
    setup.log.info(setup.context(), 'campaign paused');
    void this.handOver(current, false);
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

  private async shutDown(release: boolean): Promise<void> {
    const { setup, standing, signals, calls, steps, term, campaigner, push, duplicate } = this.parts;
    const current = standing.role === 'leader' ? standing.term : null;
    if (current) term.revoke('stopped', null, 'stopped');
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
    if (release) await this.handOver(current, false);
    push.stop();
    standing.holdOffUntil = 0;
    duplicate.forget();
    setup.log.info(setup.context(), 'campaign stopped');
  }

  /**
   * Ends a term given up on purpose, in this order: its signal has aborted (the caller revoked
   * it), its work is awaited up to its deadline (never past: from there the lease protects the
   * next leader), then the lease is released. With no term, releases the candidacy. Handovers run
   * one after another (a stop() during a stepDown() releases after it); meanwhile nothing
   * campaigns, and a follower campaigns again once it is done (after the hold-off of a stepDown,
   * counted from when the work ended).
   */
  private handOver(current: Term | null, holdOff: boolean): Promise<void> {
    const { setup, standing, steps } = this.parts;
    const previous = standing.handover;
    const run = (async () => {
      await previous;
      if (current) await termWorkSettled(current.controller.signal, current.deadline);
      if (holdOff) standing.holdOffUntil = stepDownHoldOffUntil(performance.now(), setup.options);
      await this.parts.releaseAfterCurrent(current?.token ?? null);
    })();
    standing.handover = run;
    return run.finally(() => {
      if (standing.handover !== run) return;
      standing.handover = null;
      if (this.currentRole() === 'follower') {
        steps.follow(afterStepDown({ nowMs: performance.now(), holdOffUntilMs: standing.holdOffUntil }));
      }
    });
  }

  /** Read through a method so TypeScript does not narrow it across awaits. */
  private currentRole(): Role {
    return this.parts.standing.role;
  }
}
