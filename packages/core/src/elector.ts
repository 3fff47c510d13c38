import { performance } from 'node:perf_hooks';
import { BehaviorSubject, Observable, Subject, distinctUntilChanged, map } from 'rxjs';
import type { CampaignResult, ElectionBackend } from './backend';
import { BackendStateTracker, type BackendState } from './backend-state';
import { capabilityOf, supports } from './capabilities';
import { ConclaveError } from './errors';
import { resolveElectorOptions, type ElectorOptions, type ResolvedElectorOptions } from './elector-options';
import type { Logger } from './logger';
import { electorMetrics, type ElectorMetrics } from './metrics';
import { gridTimers } from './grid-timers';
import { candidateOf, candidateOfNullable, newInstanceId } from './instance-id';
import { withTimeout } from './timing';
import { warnWhenUnreachable } from './unreachable-warning';
import { waitForLeadership, type WaitForLeadershipOptions } from './wait-for-leadership';
import { runOnce, type OnceTask, type RunOnceOptions, type RunOnceResult } from './run-once';
import type {
  ElectedEvent,
  ElectorHealth,
  LeaderTask,
  LeadershipState,
  LeaseContext,
  RevokeReason,
  RevokedEvent,
  Role,
} from './elector-types';
import {
  afterRenewFailed,
  afterRenewed,
  afterStaleTerm,
  afterStepDown,
  campaignBackoff,
  campaignTimeoutMs,
  judgeGrant,
  leaseDeadline,
  mustStepDown,
  nextCampaign,
  nextRenewal,
  onChangePushed,
  renewInterval,
  renewTimeoutMs,
  stepDownHoldOffUntil,
  usableLeaseMs,
  type PacingDecision,
} from './elector-pacing';

export type {
  Role,
  RevokeReason,
  LeadershipState,
  ElectedEvent,
  RevokedEvent,
  LeaseContext,
  LeaderTask,
  ElectorHealth,
} from './elector-types';

interface Term {
  token: number;
  /** Renewal interval for this term: renewMs, or less when the backend grants a shorter lease. */
  renewEveryMs: number;
  /** The lease this term runs on: leaseMs, or what the backend granted when that is shorter. */
  leaseMs: number;
  /** performance.now() after which this candidate must not act as leader. */
  deadline: number;
  controller: AbortController;
}

/**
 * One candidate in one election. See the README for the contract; in brief:
 * `start()` campaigns, `isLeader()` answers synchronously and turns false on the monotonic
 * clock before the lease can end on the server, `stop()` releases.
 *
 * Internally one backend call is in flight at a time; a timer drives the next call (renew as
 * leader, campaign as follower), and a second timer ends the term at its deadline whether or not
 * the backend ever answers. When each call comes is decided in elector-pacing.ts; this class
 * reads the clock, keeps the state, and arms the timers those decisions name.
 */
export class Elector {
  readonly election: string;
  readonly candidateId: string;
  /**
   * What this Elector holds leases under: `candidateId`, a space and a nonce of its own, so that
   * two processes started with one candidate id never share a term (see instance-id.ts).
   */
  readonly instanceId: string;
  readonly options: Readonly<ResolvedElectorOptions>;

  private readonly backend: ElectionBackend;
  private readonly log: Logger;
  private readonly stateSubject: BehaviorSubject<LeadershipState>;
  private readonly electedSubject = new Subject<ElectedEvent>();
  private readonly revokedSubject = new Subject<RevokedEvent>();
  private readonly tasks = new Set<LeaderTask>();

  private role: Role = 'stopped';
  private term: Term | null = null;
  /** Highest token this Elector has led with; a later term must have a greater one. */
  private lastToken: number | null = null;
  /** Bumped whenever the role changes, so answers to calls sent before the change are ignored. */
  private epoch = 0;
  private busy: Promise<void> | null = null;
  private wakeRequested = false;
  /** Cancels the next scheduled step (a plain timer or a grid slot). */
  private cancelStep: (() => void) | null = null;
  private deadlineTimer: NodeJS.Timeout | null = null;
  private holdOffUntil = 0;
  private failures = 0;
  /** The error of the last failed backend call (while `failures` > 0). */
  private lastFailure: unknown = null;
  private unwatch: (() => void) | null = null;
  private firstOutcome: (() => void) | null = null;
  private stopping: Promise<void> | null = null;
  /** performance.now() of the last backend call that succeeded. */
  private lastContactAt = 0;
  private readonly metrics: ElectorMetrics;
  private unobserveLease: (() => void) | null = null;
  private readonly backendStates = new BackendStateTracker();
  private unreachableWarning: { forget(): void } | null = null;
  /** The instance id of another Elector with our candidate id that leads, while one does. */
  private duplicateLeader: string | null = null;

  readonly state$: Observable<LeadershipState>;
  readonly isLeader$: Observable<boolean>;
  readonly leader$: Observable<string | null>;
  readonly elected$: Observable<ElectedEvent>;
  readonly revoked$: Observable<RevokedEvent>;
  /**
   * Changes of `backendState` (`connected`, `suspended`, `lost`, `reconnected`), judged from the
   * outcomes of this Elector's own calls. Emits changes only; read `backendState` for the current one.
   */
  readonly backendState$: Observable<BackendState>;

  /** Throws `ConclaveError` (`INVALID_OPTIONS`, `INVALID_NAME`) for bad options; does no I/O. */
  constructor(options: ElectorOptions) {
    this.options = Object.freeze(resolveElectorOptions(options));
    this.backend = this.options.backend;
    this.election = this.options.election;
    this.candidateId = this.options.candidateId;
    this.instanceId = newInstanceId(this.candidateId);
    this.log = this.options.logger;
    this.metrics = electorMetrics(this.election, this.backend.kind, this.options.metrics);
    this.stateSubject = new BehaviorSubject<LeadershipState>({ role: 'stopped', leaderId: null, token: null });
    this.state$ = this.stateSubject.asObservable();
    this.isLeader$ = this.state$.pipe(
      map((s) => s.role === 'leader'),
      distinctUntilChanged(),
    );
    this.leader$ = this.state$.pipe(
      map((s) => s.leaderId),
      distinctUntilChanged(),
    );
    this.elected$ = this.electedSubject.asObservable();
    this.revoked$ = this.revokedSubject.asObservable();
    this.backendState$ = this.backendStates.changes$;
    if (this.options.warnUnreachable) {
      this.unreachableWarning = warnWhenUnreachable({
        election: this.election,
        backend: this.backend,
        backendKind: this.backend.kind,
        states: this.backendState$,
        failures: () => this.failures,
        lastError: () => this.lastFailure,
      });
    }
  }

  /** Whether the backend answers (see `BackendState`); `null` while stopped or before the first answer. */
  get backendState(): BackendState | null {
    return this.backendStates.state;
  }

  /** Current state snapshot. */
  get state(): LeadershipState {
    return this.stateSubject.getValue();
  }

  /** Fencing token of the current term while leading, else `null`. */
  get token(): number | null {
    return this.isLeader() ? this.term!.token : null;
  }

  /**
   * True only while this candidate leads and its lease, counted on the monotonic clock from when
   * the last successful acquire/renew was sent, minus `safetyMarginMs`, has not run out.
   * Synchronous and I/O-free: it turns false on time even if the backend never answers.
   */
  isLeader(): boolean {
    return this.role === 'leader' && this.term !== null && performance.now() < this.term.deadline;
  }

  /**
   * For liveness probes (like client-go's HealthzAdaptor): not ok when this Elector believes it
   * leads past its deadline (its timers are starved: the event loop is stuck), or when the
   * backend has not answered for longer than a lease.
   */
  health(): ElectorHealth {
    const now = performance.now();
    const base = {
      role: this.role,
      // Whole ms, rounded down: never more time than is left.
      leaseRemainingMs: this.role === 'leader' && this.term ? Math.max(0, Math.floor(this.term.deadline - now)) : null,
      termLeaseMs: this.role === 'leader' && this.term ? this.term.leaseMs : null,
      renewEveryMs: this.role === 'leader' && this.term ? this.term.renewEveryMs : null,
      consecutiveFailures: this.failures,
    };
    if (this.role === 'leader' && this.term && now >= this.term.deadline) {
      return { ...base, ok: false, problem: 'leader past its lease deadline without renewing' };
    }
    if (this.duplicateLeader !== null && this.role === 'follower') {
      return {
        ...base,
        ok: false,
        problem: `duplicate candidate id: another Elector with candidate id ${JSON.stringify(this.candidateId)} leads`,
      };
    }
    if (this.failures > 0 && this.lastFailure instanceof ConclaveError && this.lastFailure.code === 'MIGRATION_CONFLICT') {
      return { ...base, ok: false, problem: this.lastFailure.message };
    }
    if ((this.role === 'leader' || this.role === 'follower') && this.failures > 0 && now - this.lastContactAt > this.options.leaseMs) {
      return { ...base, ok: false, problem: `backend unreachable for more than a lease (${this.failures} failed calls)` };
    }
    return { ...base, ok: true };
  }

  /**
   * Starts campaigning. Resolves once the first outcome is known (leader, follower, or the
   * backend could not be reached — then it keeps trying in the background). Idempotent.
   */
  start(): Promise<void> {
    if (this.role !== 'stopped') return Promise.resolve();
    if (this.stopping) return this.stopping.then(() => this.start());
    this.role = 'follower';
    this.epoch++;
    this.failures = 0;
    this.lastContactAt = performance.now();
    this.unobserveLease = this.metrics.observeLease(() =>
      this.isLeader() ? this.term!.deadline - performance.now() : null,
    );
    this.publish({ role: 'follower', leaderId: null, token: null });
    this.log.info(this.context(), 'campaign started');
    if (supports(this.backend, 'push')) {
      try {
        this.unwatch = this.backend.watch!(this.election, this.instanceId, () => this.onChangeHint());
      } catch (err) {
        // Without push the core polls at retryMs: slower hand-over, same safety.
        this.log.warn({ ...this.context(), err }, 'watch failed; polling instead');
      }
    }
    const first = new Promise<void>((resolve) => {
      this.firstOutcome = resolve;
    });
    this.schedule(0);
    return first;
  }

  /**
   * Stops campaigning and releases leadership at once if held. Idempotent; never rejects. The
   * role turns `stopped` when this is called (a leader goes from `leader` straight to `stopped`;
   * `revoked$` reports `stopped`); the promise resolves once the release has returned.
   */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.role === 'stopped') return Promise.resolve();
    this.stopping = this.shutDown().finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  /** `await using elector = new Elector(…)`: stops (and releases) when the scope ends, like `stop()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** Gives up leadership now (and releases it) but keeps campaigning, after 2 × `retryMs`. */
  async stepDown(): Promise<void> {
    if (this.role !== 'leader') return;
    const token = this.term!.token;
    this.holdOffUntil = stepDownHoldOffUntil(performance.now(), this.options);
    this.revoke('stepped-down');
    await this.releaseExclusive(token);
    if (this.currentRole() === 'follower') {
      this.follow(afterStepDown({ nowMs: performance.now(), holdOffUntilMs: this.holdOffUntil }));
    }
  }

  /** Stops campaigning without stopping; a leader steps down and releases. */
  pause(): void {
    if (this.role === 'stopped' || this.role === 'paused') return;
    const token = this.term?.token ?? null;
    if (this.role === 'leader') this.revoke('paused');
    this.role = 'paused';
    this.epoch++;
    this.clearStepTimer();
    this.publish({ role: 'paused', leaderId: this.state.leaderId, token: this.state.token, reason: this.state.reason });
    this.log.info(this.context(), 'campaign paused');
    void this.releaseExclusive(token);
  }

  /** Campaigns again after `pause()`. */
  resume(): void {
    if (this.role !== 'paused') return;
    this.role = 'follower';
    this.epoch++;
    this.publish({ role: 'follower', leaderId: this.state.leaderId, token: this.state.token });
    this.log.info(this.context(), 'campaign resumed');
    this.schedule(0);
  }

  /**
   * Runs `task` each time this candidate becomes leader (and now, if it leads). Its `signal`
   * aborts when the term ends, before the lease can expire on the server. A task that throws is
   * logged, never rethrown. Returns a function that unregisters the task (a running task keeps
   * its signal).
   */
  whileLeader(task: LeaderTask): () => void {
    if (typeof task !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', 'whileLeader needs a function', { election: this.election });
    }
    this.tasks.add(task);
    if (this.isLeader()) this.runTask(task, this.term!);
    return () => {
      this.tasks.delete(task);
    };
  }

  /**
   * Resolves with this term's `{ token, signal }` once this candidate leads — at once if it does
   * (`signal` aborts when the term ends, as for `whileLeader`). Waits through `pause()`. Rejects
   * with a `ConclaveError`: `INVALID_OPTIONS` for bad options (nothing else happens), `ABORTED`
   * when `options.signal` aborts, `TIMEOUT` after `options.timeoutMs` (0: look once), `STOPPED`
   * when the Elector is stopped — already when called (call `start()` first; it need not have
   * resolved), or by `stop()` meanwhile. Leaves no timer or listener behind on any path.
   */
  waitForLeadership(options?: WaitForLeadershipOptions): Promise<LeaseContext> {
    return waitForLeadership<LeaseContext>(
      {
        election: this.election,
        current: () => (this.isLeader() ? { token: this.term!.token, signal: this.term!.controller.signal } : null),
        stopped: () => this.role === 'stopped',
        changes: this.state$,
      },
      options,
    );
  }

  /**
   * A scheduled job that one host of many runs: starts campaigning; if elected within
   * `waitMs` (default 0: the first campaign the backend answers decides) runs `task({ token, signal })` once, keeps
   * the lease until `holdAtLeastMs` after the task started (so candidates firing a little later
   * find it taken), then stops (releasing) and resolves `{ ran: true, result }`. Not elected in
   * time: stops and resolves `{ ran: false }`. Failed campaigns are tried again for up to a lease
   * past `waitMs`; if none is answered it rejects with `BACKEND_UNAVAILABLE`, as nobody may lead.
   * The Elector is stopped whenever this settles.
   * A task that throws holds just the same, then its error is rethrown. The term ending (lease
   * lost) or `options.signal` aborting aborts the task's `signal` and skips the hold; an abort
   * before the election rejects with `ABORTED`, a `stop()` meanwhile with `STOPPED`. Bad options
   * reject with `INVALID_OPTIONS` before anything else.
   */
  runOnce<T>(task: OnceTask<T>, options?: RunOnceOptions): Promise<RunOnceResult<T>> {
    return runOnce(this, task, options);
  }

  // ---- the loop -------------------------------------------------------------------------

  private schedule(delayMs: number): void {
    this.clearStepTimer();
    const timer = setTimeout(() => {
      this.cancelStep = null;
      this.step();
    }, Math.max(0, delayMs));
    this.cancelStep = () => clearTimeout(timer);
  }

  /** Schedules the next step on a shared grid slot (see GridTimers): batched with other Electors. */
  private scheduleAtSlot(slotMs: number): void {
    this.clearStepTimer();
    const cancel = gridTimers.at(slotMs, () => {
      this.cancelStep = null;
      this.step();
    });
    this.cancelStep = cancel;
  }

  private clearStepTimer(): void {
    this.cancelStep?.();
    this.cancelStep = null;
  }

  /**
   * Arms what a pacing decision names. The step itself does what the role calls for when it runs
   * (the role may change before the timer fires).
   */
  private follow(next: PacingDecision): void {
    if (next.action === 'step-down') this.revoke('lease-expired');
    else if (next.action === 'wait-for-push') return;
    else if ('slotMs' in next) this.scheduleAtSlot(next.slotMs);
    else this.schedule(next.delayMs);
  }

  private onChangeHint(): void {
    if (this.role !== 'follower' && this.role !== 'leader') return;
    if (this.busy) {
      this.wakeRequested = true;
      return;
    }
    this.follow(onChangePushed({ role: this.role, nowMs: performance.now(), holdOffUntilMs: this.holdOffUntil }));
  }

  private step(): void {
    if (this.busy) {
      this.wakeRequested = true;
      return;
    }
    if (this.role === 'follower') void this.exclusive(() => this.campaignOnce());
    else if (this.role === 'leader') void this.exclusive(() => this.renewOnce());
  }

  /** Runs one backend operation at a time; a hint that arrived meanwhile triggers another step. */
  private exclusive(op: () => Promise<void>): Promise<void> {
    const run = (async () => {
      try {
        await op();
      } catch (err) {
        // op handles its own errors; this is a last guard against an unhandled rejection.
        this.log.error({ ...this.context(), err }, 'unexpected error in election loop');
      } finally {
        this.busy = null;
        if (this.wakeRequested) {
          this.wakeRequested = false;
          this.onChangeHint();
        }
      }
    })();
    this.busy = run;
    return run;
  }

  private async campaignOnce(): Promise<void> {
    const epoch = this.epoch;
    const { leaseMs, safetyMarginMs, value } = this.options;
    const sentAt = performance.now();
    let result: CampaignResult;
    try {
      result = await this.timed(
        'campaign',
        (timing) =>
          this.backend.campaign({ election: this.election, candidateId: this.instanceId, leaseMs, ...(value === undefined ? {} : { value }), ...timing }),
        campaignTimeoutMs(this.options),
        () => this.unavailable('campaign timed out'),
      );
    } catch (err) {
      if (epoch !== this.epoch) return;
      this.onFailure('campaign', err);
      this.resolveFirstOutcome();
      this.follow(this.backoff());
      return;
    }
    if (epoch !== this.epoch) {
      // We were paused or stopped meanwhile; their release covers a lease this answer granted.
      return;
    }
    this.onSuccess();
    if (result.role === 'leader') {
      const usable = usableLeaseMs(result.leaseMs, leaseMs);
      const deadline = leaseDeadline(sentAt, usable, safetyMarginMs);
      const now = performance.now();
      const grant = judgeGrant({ nowMs: now, token: result.token, lastToken: this.lastToken, deadlineMs: deadline });
      if (grant === 'stale-term') {
        // The server still holds our previous term, which we already gave up locally. Leading it
        // again would repeat a token; release it and take a fresh term instead.
        this.log.debug({ ...this.context(), token: result.token }, 'releasing a term already given up');
        await this.releaseNow(result.token);
        const canRaiseTokenFloor = supports(this.backend, 'tokenFloor');
        if (canRaiseTokenFloor) {
          // A server that lost its counter (a restart without persistence) would hand out old
          // tokens for a while: lift it past ours instead of looping until it gets there.
          await this.backend.raiseTokenFloor!(this.election, this.lastToken!).catch((err: unknown) => {
            this.log.warn({ ...this.context(), err }, 'could not raise the token floor');
          });
        }
        this.follow(afterStaleTerm({ canRaiseTokenFloor }, this.options));
      } else if (grant === 'too-late') {
        this.log.warn({ ...this.context(), token: result.token }, 'lease granted too late to use; releasing it');
        await this.releaseNow(result.token);
        this.follow(this.backoff());
      } else {
        this.becomeLeader(result.token, deadline, usable);
      }
    } else {
      const leaderId = candidateOfNullable(result.leaderId);
      if (leaderId !== this.state.leaderId || result.token !== this.state.token) {
        this.publish({ role: 'follower', leaderId, token: result.token, reason: this.state.reason });
      }
      this.noticeDuplicate(result.leaderId);
      const namedSelf = result.leaderId === this.instanceId;
      if (namedSelf) {
        // A stale node or row of ours; pacing looks again at retryMs.
        this.log.warn({ ...this.context() }, 'backend reports this candidate as leader without a lease');
      }
      this.follow(
        nextCampaign(
          {
            nowMs: performance.now(),
            leaseRemainingMs: result.leaseRemainingMs,
            push: capabilityOf(this.backend, 'push'),
            // Pacing ignores push for a record naming us, so do not ask the backend then.
            watching: !namedSelf && this.pushActive(),
            namedSelf,
            holdOffUntilMs: this.holdOffUntil,
          },
          this.options,
        ),
      );
    }
    this.resolveFirstOutcome();
  }

  private async renewOnce(): Promise<void> {
    const term = this.term!;
    const sentAt = performance.now();
    if (mustStepDown(sentAt, term.deadline)) {
      this.revoke('lease-expired');
      return;
    }
    const epoch = this.epoch;
    const { leaseMs } = this.options;
    try {
      const result = await this.timed(
        'renew',
        (timing) => this.backend.renew({ election: this.election, candidateId: this.instanceId, token: term.token, leaseMs, ...timing }),
        renewTimeoutMs(sentAt, term.deadline),
        () => this.unavailable('renew timed out'),
      );
      if (epoch !== this.epoch) return;
      this.onSuccess();
      const now = performance.now();
      if (mustStepDown(now, term.deadline)) {
        // The answer came after the deadline, before the deadline timer ran (a stalled loop):
        // isLeader() has already said false, and a term that ended does not come back.
        this.revoke('lease-expired');
        return;
      }
      if (result.held) {
        const renewed = afterRenewed({ sentAtMs: sentAt, grantedMs: result.leaseMs, deadlineMs: term.deadline }, this.options);
        if (renewed.extended) this.setDeadline(term, renewed.deadlineMs);
        term.renewEveryMs = renewed.renewEveryMs;
        term.leaseMs = usableLeaseMs(result.leaseMs, this.options.leaseMs);
        this.follow(nextRenewal({ nowMs: now, deadlineMs: term.deadline, renewEveryMs: term.renewEveryMs }));
      } else {
        this.revoke('lease-lost', candidateOfNullable(result.leaderId));
      }
    } catch (err) {
      if (epoch !== this.epoch) return;
      this.onFailure('renew', err);
      this.follow(afterRenewFailed({ nowMs: performance.now(), deadlineMs: term.deadline }, this.options));
    }
  }

  // ---- transitions ----------------------------------------------------------------------

  private becomeLeader(token: number, deadline: number, usableMs: number): void {
    this.noticeDuplicate(null);
    this.epoch++;
    this.role = 'leader';
    this.lastToken = token;
    const term: Term = {
      token,
      deadline,
      renewEveryMs: renewInterval(usableMs, this.options),
      leaseMs: usableMs,
      controller: new AbortController(),
    };
    this.term = term;
    this.setDeadline(term, deadline);
    this.publish({ role: 'leader', leaderId: this.candidateId, token });
    this.log.info({ ...this.context(), token }, 'elected');
    this.electedSubject.next({ token, reason: 'acquired' });
    // Read the clock again: the subscribers above run synchronously and may take a while.
    this.follow(nextRenewal({ nowMs: performance.now(), deadlineMs: deadline, renewEveryMs: term.renewEveryMs }));
    for (const task of this.tasks) {
      if (this.term === term) this.runTask(task, term);
    }
  }

  /**
   * Tracks whether the leader a backend names is another instance with our candidate id. Such a
   * duplicate cannot share our term (each instance holds leases under its own id), but it is a
   * deployment mistake worth saying: a warning when it starts, a `health()` problem while it lasts.
   */
  private noticeDuplicate(leaderInstance: string | null): void {
    const duplicate =
      leaderInstance !== null && leaderInstance !== this.instanceId && candidateOf(leaderInstance) === this.candidateId
        ? leaderInstance
        : null;
    if (duplicate !== null && this.duplicateLeader === null) {
      this.log.warn(
        { ...this.context(), instance: this.instanceId, leaderInstance: duplicate },
        'another Elector with this candidate id leads this election; candidate ids should be unique',
      );
    }
    this.duplicateLeader = duplicate;
  }

  /**
   * Ends the current term locally, at once: isLeader() is false when this returns. `next` is the
   * role that follows: `stopped` for stop(), so that state$ goes from leader straight to stopped.
   */
  private revoke(reason: RevokeReason, leaderId: string | null = null, next: 'follower' | 'stopped' = 'follower'): void {
    const term = this.term;
    if (this.role !== 'leader' || !term) return;
    this.epoch++;
    this.role = next;
    this.term = null;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
    this.publish({ role: next, leaderId, token: null, reason });
    // A renewal that could not be confirmed in time: the backend is out of reach for our purpose.
    if (reason === 'lease-expired' && !isClosed(this.lastFailure)) this.backendStates.gaveUp();
    const log = reason === 'lease-expired' ? this.log.warn : this.log.info;
    log.call(this.log, { ...this.context(), token: term.token, reason }, 'leadership revoked');
    term.controller.abort(new ConclaveError('LEASE_LOST', `leadership ended: ${reason}`, { election: this.election }));
    this.revokedSubject.next({ token: term.token, reason });
    if (reason === 'lease-expired') {
      // We could not confirm the lease in time; let it go on the server if we still can, so the
      // next leader need not wait for it to expire, then campaign again.
      void this.releaseExclusive(term.token).then(() => {
        if (this.role === 'follower') this.schedule(0);
      });
    } else if (reason === 'lease-lost') {
      this.schedule(0);
    }
  }

  private setDeadline(term: Term, deadline: number): void {
    term.deadline = deadline;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      if (this.term === term && mustStepDown(performance.now(), term.deadline)) this.revoke('lease-expired');
      else if (this.term === term) this.setDeadline(term, term.deadline);
    }, Math.max(0, deadline - performance.now()));
  }

  private async shutDown(): Promise<void> {
    const token = this.term?.token ?? null;
    if (this.role === 'leader') this.revoke('stopped', null, 'stopped');
    this.role = 'stopped';
    this.epoch++;
    this.clearStepTimer();
    this.unobserveLease?.();
    this.unobserveLease = null;
    this.backendStates.reset();
    this.unreachableWarning?.forget();
    this.resolveFirstOutcome();
    // The role changes when stop() is called, not when the release returns: nothing campaigns
    // from here on, and waiters (waitForLeadership) learn it at once.
    this.publish({ role: 'stopped', leaderId: null, token: null });
    // Release before unwatching: a backend may tie its wake-up channel to the subscription, and
    // followers should be woken by the release itself.
    await this.releaseExclusive(token);
    this.unwatch?.();
    this.unwatch = null;
    this.holdOffUntil = 0;
    this.duplicateLeader = null;
    this.log.info(this.context(), 'campaign stopped');
  }

  /** Waits for the call in flight, then releases (with `token`, that term only). */
  private async releaseExclusive(token: number | null): Promise<void> {
    while (this.busy) await this.busy;
    await this.exclusive(() => this.releaseNow(token));
  }

  /** Releases leadership and candidacy; logs, never throws. */
  private async releaseNow(token: number | null): Promise<void> {
    try {
      await this.timed(
        'release',
        (timing) =>
          this.backend.release({
            election: this.election,
            candidateId: this.instanceId,
            token,
            // A release that lands late must not end a term this Elector has not seen yet.
            ...(token === null ? { notAbove: this.lastToken ?? 0 } : {}),
            ...timing,
          }),
        this.options.leaseMs,
        () => this.unavailable('release timed out'),
      );
    } catch (err) {
      this.log.warn({ ...this.context(), err }, 'release failed; the lease will expire on the server');
    }
  }

  // ---- helpers --------------------------------------------------------------------------

  private runTask(task: LeaderTask, term: Term): void {
    const { token, controller } = term;
    Promise.resolve()
      .then(() => task({ token, signal: controller.signal }))
      .catch((err: unknown) => {
        if (controller.signal.aborted && err === controller.signal.reason) return;
        this.log.error({ ...this.context(), token, err }, 'whileLeader task failed');
      });
  }

  /**
   * Makes a backend call bounded by `timeoutMs` and records its duration and outcome. The call is
   * told when we give up on it (`deadlineMs`) and learns it when we do (`signal`): the next call
   * may follow at once, while this one still runs (see ElectionBackend, "Calls the core gives up on").
   */
  private async timed<T>(
    operation: 'campaign' | 'renew' | 'release',
    send: (timing: { signal: AbortSignal; deadlineMs: number }) => Promise<T>,
    timeoutMs: number,
    onTimeout: () => Error,
  ): Promise<T> {
    const controller = new AbortController();
    const call = send({ signal: controller.signal, deadlineMs: performance.now() + timeoutMs });
    const started = performance.now();
    const giveUp = () => {
      const err = onTimeout();
      controller.abort(err);
      return err;
    };
    try {
      const value = await withTimeout(call, timeoutMs, giveUp);
      this.lastContactAt = performance.now();
      this.metrics.backendCall(operation, this.lastContactAt - started);
      return value;
    } catch (err) {
      // error.type: the stable error code, else the error's class; never its message.
      const type = err instanceof ConclaveError ? err.code : err instanceof Error ? err.name : '_OTHER';
      this.metrics.backendCall(operation, performance.now() - started, type);
      throw err;
    }
  }

  private publish(next: LeadershipState): void {
    const cur = this.stateSubject.getValue();
    const clean: LeadershipState = { role: next.role, leaderId: next.leaderId, token: next.token };
    if (next.reason !== undefined && next.role !== 'leader' && next.role !== 'stopped') clean.reason = next.reason;
    if (
      cur.role === clean.role &&
      cur.leaderId === clean.leaderId &&
      cur.token === clean.token &&
      cur.reason === clean.reason
    ) {
      return;
    }
    if (cur.role !== clean.role) {
      this.metrics.transition(clean.role, clean.reason);
    }
    this.stateSubject.next(clean);
  }

  private onFailure(what: string, err: unknown): void {
    this.failures++;
    this.lastFailure = err;
    // The backend state follows whether the backend answers: a refusal (MIGRATION_CONFLICT, say)
    // is an answer, and a backend closed by its owner is no outage.
    const code = err instanceof ConclaveError ? err.code : null;
    if (code === null || code === 'BACKEND_UNAVAILABLE' || code === 'BACKEND_ERROR') {
      this.backendStates.failed(performance.now() - this.lastContactAt, this.options.leaseMs);
    } else if (!isClosed(err)) {
      this.backendStates.answered();
    }
    const context = { ...this.context(), failures: this.failures, err };
    if (err instanceof ConclaveError && err.code === 'MIGRATION_CONFLICT') {
      // A deployment mistake, not an outage: say it every time, loudly.
      this.log.error(context, `${what} refused`);
      return;
    }
    // Warn on the first failure and then at powers of two, so an outage does not flood the log.
    if ((this.failures & (this.failures - 1)) === 0) this.log.warn(context, `${what} failed`);
    else this.log.debug(context, `${what} failed`);
  }

  private onSuccess(): void {
    if (this.failures > 0) this.log.info({ ...this.context(), failures: this.failures }, 'backend reachable again');
    this.failures = 0;
    this.backendStates.answered();
  }

  /** The next campaign after a failure; the random draw spreads candidates out. */
  private backoff(): PacingDecision {
    return campaignBackoff({ failures: this.failures, jitter: Math.random() }, this.options);
  }

  private unavailable(message: string): ConclaveError {
    return new ConclaveError('BACKEND_UNAVAILABLE', message, { election: this.election, backend: this.backend.kind });
  }

  /** Whether changes of this election reach us by push right now (see ElectionBackend.isWatching). */
  private pushActive(): boolean {
    if (this.unwatch === null) return false;
    if (!this.backend.isWatching) return true;
    try {
      return this.backend.isWatching(this.election, this.instanceId);
    } catch {
      return false;
    }
  }

  /** Read through a method so TypeScript does not narrow it across awaits. */
  private currentRole(): Role {
    return this.role;
  }

  private resolveFirstOutcome(): void {
    const resolve = this.firstOutcome;
    this.firstOutcome = null;
    resolve?.();
  }

  private context(): { election: string; candidate: string; backend: string } {
    return { election: this.election, candidate: this.candidateId, backend: this.backend.kind };
  }
}

/** A backend closed by its owner: calls fail, but nothing is out of reach. */
function isClosed(err: unknown): boolean {
  return err instanceof ConclaveError && err.code === 'CLOSED';
}
