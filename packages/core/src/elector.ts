import { performance } from 'node:perf_hooks';
import type { Observable } from 'rxjs';
import { BackendCalls } from './backend-calls';
import type { BackendState } from './backend-state';
import { Campaigner } from './campaigner';
import { DuplicateLeader } from './duplicate-leader';
import { ConclaveError } from './errors';
import { resolveElectorOptions, type ElectorOptions, type ResolvedElectorOptions } from './elector-options';
import { judgeHealth } from './elector-health';
import { ElectorLifecycle } from './elector-lifecycle';
import { newStanding, type ElectorSetup, type Standing } from './elector-standing';
import type { ElectedEvent, ElectorHealth, LeaderTask, LeadershipState, LeaseContext, RevokedEvent } from './elector-types';
import { instanceIdFor } from './instance-id';
import { LeaderTasks } from './leader-tasks';
import { LeaderTerm } from './leader-term';
import { LeadershipSignals } from './leadership-signals';
import { electorMetrics } from './metrics';
import { PushWatch } from './push-watch';
import { runOnce, type OnceTask, type RunOnceOptions, type RunOnceResult } from './run-once';
import { StepRunner } from './step-runner';
import { waitForLeadership, type WaitForLeadershipOptions } from './wait-for-leadership';

/**
 * One candidate in one election. See the README for the contract; in brief:
 * `start()` campaigns, `isLeader()` answers synchronously and turns false on the monotonic
 * clock before the lease can end on the server, `stop()` releases.
 *
 * Internally one backend call is in flight at a time; a timer drives the next call (renew as
 * leader, campaign as follower), and a second timer ends the term at its deadline whether or not
 * the backend ever answers. This class is the facade users construct; the work is done by the
 * pieces it wires together, which share one `Standing`:
 * - campaigner.ts: the follower's campaign and what its answer leads to;
 * - leader-term.ts: the leader's term: renewal, deadline, revocation;
 * - step-runner.ts: the timer for the next call, one call at a time;
 * - push-watch.ts: changes the backend pushes;
 * - elector-lifecycle.ts: start, stop, pause, resume, stepDown;
 * - backend-calls.ts: bounded, measured calls and whether the backend answers;
 * - leadership-signals.ts: the state and event streams.
 * When each call comes is decided in elector-pacing.ts.
 */
export class Elector {
  readonly election: string;
  readonly candidateId: string;
  /**
   * What this Elector holds leases under: `candidateId`, a space and a nonce no other Elector of
   * this election has, so that two processes started with one candidate id never share a term.
   * This process's Electors of the candidate in other elections share the nonce, so backends can
   * batch their calls into one statement per holder (see instance-id.ts).
   */
  readonly instanceId: string;
  readonly options: Readonly<ResolvedElectorOptions>;

  private readonly standing: Standing = newStanding();
  private readonly signals: LeadershipSignals;
  private readonly calls: BackendCalls;
  private readonly steps: StepRunner;
  private readonly tasks: LeaderTasks;
  private readonly term: LeaderTerm;
  private readonly campaigner: Campaigner;
  private readonly duplicate: DuplicateLeader;
  private readonly lifecycle: ElectorLifecycle;

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
    const { backend, election, candidateId, logger: log } = this.options;
    this.election = election;
    this.candidateId = candidateId;
    this.instanceId = instanceIdFor(candidateId, election);
    const setup: ElectorSetup = {
      election,
      candidateId,
      instanceId: this.instanceId,
      backend,
      options: this.options,
      log,
      context: () => ({ election, candidate: candidateId, backend: backend.kind }),
    };
    const standing = this.standing;
    const metrics = electorMetrics(election, backend.kind, this.options.metrics);
    const signals = (this.signals = new LeadershipSignals(metrics));
    this.state$ = signals.state$;
    this.isLeader$ = signals.isLeader$;
    this.leader$ = signals.leader$;
    this.elected$ = signals.elected$;
    this.revoked$ = signals.revoked$;
    const calls = (this.calls = new BackendCalls(setup, metrics, () => standing.lastToken));
    this.backendState$ = calls.states.changes$;
    const steps = (this.steps = new StepRunner(setup, {
      step: () => this.step(),
      wake: () => push.changed(),
      stepDown: () => term.revoke('lease-expired'),
    }));
    const push = new PushWatch(setup, standing, steps);
    const releaseAfterCurrent = (token: number | null) => steps.afterCurrent(() => calls.release(token));
    const tasks = (this.tasks = new LeaderTasks(setup));
    const term = (this.term = new LeaderTerm({ setup, standing, signals, calls, steps, tasks, releaseAfterCurrent }));
    const duplicate = (this.duplicate = new DuplicateLeader(setup));
    const campaigner = (this.campaigner = new Campaigner({ setup, standing, signals, calls, steps, term, push, duplicate }));
    this.lifecycle = new ElectorLifecycle({
      setup,
      standing,
      signals,
      metrics,
      calls,
      steps,
      term,
      campaigner,
      push,
      duplicate,
      releaseAfterCurrent,
    });
  }

  /** Whether the backend answers (see `BackendState`); `null` while stopped or before the first answer. */
  get backendState(): BackendState | null {
    return this.calls.states.state;
  }

  /** Current state snapshot. */
  get state(): LeadershipState {
    return this.signals.state;
  }

  /** Fencing token of the current term while leading, else `null`. */
  get token(): number | null {
    return this.term.current()?.token ?? null;
  }

  /**
   * True only while this candidate leads and its lease, counted on the monotonic clock from when
   * the last successful acquire/renew was sent, minus `safetyMarginMs`, has not run out.
   * Synchronous and I/O-free: it turns false on time even if the backend never answers.
   */
  isLeader(): boolean {
    return this.term.current() !== null;
  }

  /**
   * For liveness probes (like client-go's HealthzAdaptor): not ok when this Elector believes it
   * leads past its deadline (its timers are starved: the event loop is stuck), when the backend
   * refuses it, when a campaigning Elector's backend has not answered since `start()`, or when
   * the backend has not answered for longer than a lease.
   */
  health(): ElectorHealth {
    const { role, term } = this.standing;
    return judgeHealth({
      nowMs: performance.now(),
      role,
      term,
      candidateId: this.candidateId,
      leaseMs: this.options.leaseMs,
      failures: this.calls.failures,
      lastFailure: this.calls.lastFailure,
      lastContactAt: this.calls.lastContactAt,
      answered: this.calls.answered,
      refusal: this.calls.refusal(),
      duplicateLeader: this.duplicate.current,
    });
  }

  /**
   * Starts campaigning. Resolves once the first outcome is known (leader, follower, or the
   * backend could not be reached — then it keeps trying in the background). Idempotent.
   * Rejects when the first campaign fails with `BACKEND_AUTH` or `BACKEND_MISCONFIGURED` (a
   * configuration that can never work): the Elector is stopped then, and may be started again.
   * Such an error later on (after a first failure that was not one, or a password rotated under
   * a running Elector) is retried like any other, logged as an error and reported by `health()`.
   */
  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /**
   * Stops campaigning and releases leadership if held, once the term's work has ended (see
   * `whileLeader` for the order). Idempotent; never rejects. The role turns `stopped` when this is
   * called (a leader goes from `leader` straight to `stopped`; `revoked$` reports `stopped`); the
   * promise resolves once the release has returned.
   */
  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** `await using elector = new Elector(…)`: stops (and releases) when the scope ends, like `stop()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /**
   * Gives up leadership now and releases it once the term's work has ended (see `whileLeader`),
   * but keeps campaigning, 2 × `retryMs` after that work ended. Resolves once released.
   */
  stepDown(): Promise<void> {
    return this.lifecycle.stepDown();
  }

  /** Stops campaigning without stopping; a leader steps down and releases (as `stepDown()`). */
  pause(): void {
    this.lifecycle.pause();
  }

  /** Campaigns again after `pause()`. */
  resume(): void {
    this.lifecycle.resume();
  }

  /**
   * Runs `task` each time this candidate becomes leader (and now, if it leads). Its `signal`
   * aborts when the term ends, before the lease can expire on the server. A task that throws is
   * logged, never rethrown. Returns a function that unregisters the task (a running task keeps
   * its signal).
   *
   * A term given up on purpose — `stop()`, `stepDown()`, `pause()`, the shutdown hook — ends in
   * this order: the signal aborts (`isLeader()` is false from then on), the running tasks (and a
   * `runOnce` task) are awaited, then the lease is released. So the next leader's task starts only
   * after this one has settled, and still within milliseconds of it. The wait never goes past the
   * term's deadline: a task that ignores its signal cannot hold the election longer than the lease
   * would have. A term that ends otherwise (lease lost or expired) is not waited for: another
   * candidate may lead already. A task that awaits `stop()` or `stepDown()` of its own Elector
   * waits for itself until the deadline: call them without awaiting, or return first.
   */
  whileLeader(task: LeaderTask): () => void {
    if (typeof task !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', 'whileLeader needs a function', { election: this.election });
    }
    const unregister = this.tasks.add(task);
    const current = this.term.current();
    if (current) this.tasks.run(task, current);
    return unregister;
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
        current: () => {
          const current = this.term.current();
          return current ? { token: current.token, signal: current.controller.signal } : null;
        },
        stopped: () => this.standing.role === 'stopped',
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

  /** Takes the step the role calls for, unless a call is in flight (then it follows that call). */
  private step(): void {
    if (this.steps.deferIfBusy()) return;
    const { role, handover } = this.standing;
    // A follower handing over a term campaigns once the handover is done (it arms that step).
    if (role === 'follower' && handover === null) void this.steps.exclusive(() => this.campaigner.campaignOnce());
    else if (role === 'leader') void this.steps.exclusive(() => this.term.renewOnce());
  }
}
