import { performance } from 'node:perf_hooks';
import type { CampaignResult, LeaseEndHint, RenewResult } from './backend';
import { BackendCalls } from './backend-calls';
import { CallLane } from './call-lane';
import { initialState, routeLeaseEndHint, transition, type ElectorEffect, type ElectorEvent, type ElectorState, type MachineConfig } from './elector-machine';
import type { ElectorSetup } from './elector-setup';
import { ConclaveError, isPermanentError } from './errors';
import { LeaderTasks, type TermWork } from './leader-tasks';
import { LeadershipSignals } from './leadership-signals';
import type { ElectorMetrics } from './metrics';
import { PushWatch } from './push-watch';
import { StepTimer } from './step-timer';
import { termWorkSettled } from './term-work';

/**
 * Runs the state machine of elector-machine.ts: feeds it events (calls, timers, pushes, the
 * user's start/stop/...), keeps the state it returns, and performs its effects — timers, backend
 * calls one at a time, the RxJS streams, logs, metrics, the term's signal and tasks. It decides
 * nothing itself.
 */
export class ElectorDriver {
  readonly signals: LeadershipSignals;
  readonly calls: BackendCalls;
  readonly tasks: LeaderTasks;

  private state: ElectorState = initialState;
  private readonly config: MachineConfig;
  private readonly push: PushWatch;
  private readonly timer: StepTimer;
  private readonly lane: CallLane;
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** The signal of the latest term's work (aborted when it ended). */
  private work: TermWork | null = null;
  /** Hand-overs run one after another: the latest. */
  private handovers: Promise<void> = Promise.resolve();
  /** The hand-over begun by the last effect of that kind (stop and stepDown await theirs). */
  private lastHandover: Promise<void> | null = null;
  /** Settles the promise start() returns. */
  private first: { resolve(): void; reject(err: unknown): void } | null = null;
  private stopping: Promise<void> | null = null;
  private unobserveLease: (() => void) | null = null;
  /**
   * The newest lease end pushed since the step was armed that could wait for it (performance.now()
   * timeline; see `routeLeaseEndHint`): handed to the machine when the step fires.
   */
  private keptLeaseEnd: number | null = null;

  constructor(
    private readonly setup: ElectorSetup,
    private readonly metrics: ElectorMetrics,
  ) {
    const { backend, options } = setup;
    this.config = {
      leaseMs: options.leaseMs,
      renewMs: options.renewMs,
      retryMs: options.retryMs,
      safetyMarginMs: options.safetyMarginMs,
      candidateId: setup.candidateId,
      instanceId: setup.instanceId,
      push: backend.changes?.delivery ?? 'none',
      leaseEndPush: backend.changes?.leaseEnds === true,
      tokenFloor: backend.tokenFloor !== undefined,
    };
    this.signals = new LeadershipSignals(metrics);
    this.calls = new BackendCalls(setup, metrics, () => this.state.lastToken);
    this.tasks = new LeaderTasks(setup);
    this.push = new PushWatch(setup, (hint) => this.pushed(hint));
    this.timer = new StepTimer(() => this.stepDue());
    this.lane = new CallLane(
      () => this.pushed(),
      (err) => setup.log.error({ ...setup.context(), err }, 'unexpected error in election loop'),
    );
  }

  /** The machine's state now. */
  get snapshot(): ElectorState {
    return this.state;
  }

  /** The term's work while this Elector leads and its deadline has not passed; else `null`. */
  current(): TermWork | null {
    const { role, term } = this.state;
    if (role !== 'leader' || term === null || performance.now() >= term.deadline) return null;
    return this.work?.token === term.token ? this.work : null;
  }

  start(): Promise<void> {
    if (this.state.role !== 'stopped') return Promise.resolve();
    if (this.stopping) return this.stopping.then(() => this.start());
    const first = new Promise<void>((resolve, reject) => (this.first = { resolve, reject }));
    this.dispatch({ type: 'start' });
    return first.catch((err: unknown) => this.refusedAtStart(err));
  }

  stop(): Promise<void> {
    return this.halt(true);
  }

  async stepDown(): Promise<void> {
    if (this.state.role !== 'leader' || !this.state.term) return;
    this.lastHandover = null;
    this.dispatch({ type: 'step-down' });
    await this.lastHandover;
  }

  pause(): void {
    this.dispatch({ type: 'pause' });
  }

  resume(): void {
    this.dispatch({ type: 'resume' });
  }

  /**
   * The first campaign was refused for good (a wrong password, an unknown database): stop, and
   * reject start() with the error. The rejection is what tells the caller; the log says it once
   * at info. Nothing is released: the server granted nothing, and would refuse the release too.
   */
  private async refusedAtStart(err: unknown): Promise<never> {
    this.setup.log.info({ ...this.setup.context(), err }, 'start failed: the backend refuses this configuration; stopped');
    await this.halt(false);
    throw err;
  }

  private halt(release: boolean): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.state.role === 'stopped') return Promise.resolve();
    this.stopping = this.shutDown(release).finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  private async shutDown(release: boolean): Promise<void> {
    this.lastHandover = null;
    this.dispatch({ type: 'stop', release });
    await this.lastHandover;
    this.dispatch({ type: 'stop-finished' });
  }

  private pushed(hint?: LeaseEndHint): void {
    const now = performance.now();
    if (hint !== undefined) {
      const route = routeLeaseEndHint(this.state, { now, hint, busy: this.lane.busy }, this.config);
      if (route === 'drop') return;
      if (route === 'keep') {
        this.keptLeaseEnd = now + hint.leaseRemainingMs;
        return;
      }
    }
    this.dispatch({ type: 'pushed', now, hint, busy: this.lane.busy, watching: this.push.active() });
  }

  private stepDue(): void {
    const pushedEnd = this.keptLeaseEnd;
    this.keptLeaseEnd = null;
    const now = performance.now();
    const busy = this.lane.busy;
    if (pushedEnd === null) this.dispatch({ type: 'timer-fired', now, busy });
    else this.dispatch({ type: 'timer-fired', now, busy, pushedEnd, watching: this.push.active() });
  }

  /**
   * Feeds `event` to the machine and performs the effects. Effects that are part of the call in
   * flight (giving back a grant) are awaited before the next: the promise says when all are done.
   */
  private dispatch(event: ElectorEvent): Promise<void> | void {
    const { state, effects } = transition(this.state, event, this.config);
    this.state = state;
    return this.performFrom(effects, 0);
  }

  private performFrom(effects: ElectorEffect[], from: number): Promise<void> | void {
    for (let i = from; i < effects.length; i++) {
      const pending = this.perform(effects[i]!);
      if (pending) return pending.then(() => this.performFrom(effects, i + 1));
    }
  }

  private perform(e: ElectorEffect): Promise<void> | void {
    const { setup } = this;
    switch (e.type) {
      case 'publish':
        return this.signals.publish(e.state);
      case 'elected':
        return this.signals.elected({ token: e.token, reason: 'acquired' });
      case 'revoked':
        return this.signals.revoked({ token: e.token, reason: e.reason });
      case 'begin-term':
        this.work = { token: e.token, controller: new AbortController() };
        return;
      case 'end-term':
        if (this.work?.token !== e.token) return;
        this.work.controller.abort(new ConclaveError('LEASE_LOST', `leadership ended: ${e.reason}`, { election: setup.election }));
        return;
      case 'announce':
        // Read the clock again: the subscribers told of the election run synchronously, and may take a while.
        return void this.dispatch({ type: 'term-announced', token: e.token, now: performance.now() });
      case 'run-tasks': {
        const work = this.work;
        if (work?.token === e.token) this.tasks.runAll(work, () => this.work === work && this.state.role === 'leader');
        return;
      }
      case 'log':
        setup.log[e.level]({ ...setup.context(), ...e.fields }, e.message);
        return;
      case 'arm-step':
        // A kept lease end belongs to the step it was kept for.
        this.keptLeaseEnd = null;
        return this.timer.arm(e.at);
      case 'cancel-step':
        this.keptLeaseEnd = null;
        return this.timer.cancel();
      case 'arm-deadline':
        if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
        // Whole milliseconds (Node keeps one timer list per distinct delay), rounded up; a timer
        // that still fires before the deadline is armed again by the machine.
        this.deadlineTimer = setTimeout(() => {
          this.deadlineTimer = null;
          this.dispatch({ type: 'deadline-reached', now: performance.now() });
        }, Math.max(0, Math.ceil(e.at - performance.now())));
        return;
      case 'cancel-deadline':
        if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
        this.deadlineTimer = null;
        return;
      case 'defer':
        return this.lane.defer();
      case 'campaign':
        return void this.lane.run(() => this.campaign(e));
      case 'renew':
        return void this.lane.run(() => this.renew(e));
      case 'release-grant':
        return this.calls.release(e.token);
      case 'raise-token-floor':
        return setup.backend.tokenFloor!.raise(setup.election, e.floor).catch((err: unknown) => {
          setup.log.warn({ ...setup.context(), err }, 'could not raise the token floor');
        });
      case 'release-expired':
        void this.lane.after(() => this.calls.release(e.token)).then(() => this.dispatch({ type: 'expired-term-released' }));
        return;
      case 'hand-over':
        this.lastHandover = this.handOver(e);
        return;
      case 'call-succeeded':
        return this.calls.succeeded();
      case 'call-failed':
        return this.calls.failed(e.what, e.error);
      case 'lease-given-up':
        return this.calls.gaveUpOnLease();
      case 'first-outcome':
      case 'refuse-start': {
        const first = this.first;
        this.first = null;
        if (e.type === 'first-outcome') first?.resolve();
        else first?.reject(e.error);
        return;
      }
      case 'open':
        this.calls.restart();
        this.unobserveLease = this.metrics.observeLease(() => {
          const term = this.current() && this.state.term;
          return term ? term.deadline - performance.now() : null;
        });
        return;
      case 'close':
        this.unobserveLease?.();
        this.unobserveLease = null;
        return this.calls.forget();
      case 'watch':
        return this.push.start();
      case 'unwatch':
        return this.push.stop();
    }
  }

  private async campaign({ epoch, sentAt, timeoutMs }: Extract<ElectorEffect, { type: 'campaign' }>): Promise<void> {
    const { backend, election, instanceId, options } = this.setup;
    const { leaseMs, value } = options;
    let result: CampaignResult;
    try {
      result = await this.calls.timed(
        'campaign',
        (timing) => backend.campaign({ election, candidateId: instanceId, leaseMs, ...(value === undefined ? {} : { value }), ...timing }),
        timeoutMs,
        'campaign timed out',
      );
    } catch (error) {
      const { answered, failures } = this.calls;
      this.dispatch({ type: 'campaign-failed', epoch, error, permanent: isPermanentError(error), answered, failures, jitter: Math.random() });
      return;
    }
    const answer = { epoch, sentAt, now: performance.now(), result, watching: this.push.active(), jitter: Math.random() };
    await this.dispatch({ type: 'campaign-answered', ...answer });
  }

  private async renew({ epoch, token, sentAt, timeoutMs }: Extract<ElectorEffect, { type: 'renew' }>): Promise<void> {
    const { backend, election, instanceId, options } = this.setup;
    let result: RenewResult;
    try {
      result = await this.calls.timed(
        'renew',
        (timing) => backend.renew({ election, candidateId: instanceId, token, leaseMs: options.leaseMs, ...timing }),
        timeoutMs,
        'renew timed out',
      );
    } catch (error) {
      this.dispatch({ type: 'renewal-failed', epoch, now: performance.now(), error });
      return;
    }
    this.dispatch({ type: 'renewal-answered', epoch, sentAt, now: performance.now(), result });
  }

  /**
   * Hands a term given up on purpose over: after the hand-overs before it, awaits its work (up
   * to its deadline: from there the lease protects the next leader), then releases the lease.
   */
  private handOver(e: Extract<ElectorEffect, { type: 'hand-over' }>): Promise<void> {
    const previous = this.handovers;
    const signal = e.token !== null && this.work?.token === e.token ? this.work.controller.signal : null;
    const run = (async () => {
      await previous;
      if (signal && e.deadline !== null) await termWorkSettled(signal, e.deadline);
      if (e.holdOff) this.dispatch({ type: 'term-work-settled', now: performance.now() });
      await this.lane.after(() => this.calls.release(e.token));
    })();
    this.handovers = run;
    return run.finally(() => void this.dispatch({ type: 'handover-done', id: e.id, now: performance.now() }));
  }
}
