import { performance } from 'node:perf_hooks';
import type { Observable } from 'rxjs';
import type { BackendState } from './backend-state';
import { ElectorDriver } from './elector-driver';
import { ConclaveError } from './errors';
import { resolveElectorOptions, type ElectorOptions, type ResolvedElectorOptions } from './elector-options';
import { judgeHealth } from './elector-health';
import type { ElectorSetup } from './elector-setup';
import type { ElectedEvent, ElectorHealth, LeaderTask, LeadershipState, LeaseContext, RevokedEvent } from './elector-types';
import { instanceIdFor } from './instance-id';
import { electorMetrics } from './metrics';
import { runOnce, type OnceTask, type RunOnceOptions, type RunOnceResult } from './run-once';
import { waitForLeadership, type WaitForLeadershipOptions } from './wait-for-leadership';

/**
 * One candidate in one election. `start()` campaigns; `isLeader()` answers synchronously and
 * turns false on this process's monotonic clock before the lease can end on the server; every
 * term carries a fencing `token` that strictly increases with every change of leader; `stop()`
 * releases, so another candidate leads at once. Leadership is also a set of RxJS streams
 * (`state$`, `isLeader$`, `leader$`, `elected$`, `revoked$`), and `whileLeader`,
 * `waitForLeadership` and `runOnce` cover the usual shapes of work done by one copy of a service.
 *
 * ```ts
 * const elector = new Elector({ backend, election: 'billing-cron' });
 * elector.whileLeader(async ({ token, signal }) => { await work(token, signal); });
 * await elector.start();
 * ```
 */
// Internally one state machine: elector-machine.ts decides (a pure transition function from state
// and event to the next state and the effects), elector-driver.ts performs the effects and feeds
// back what comes of them; elector-pacing.ts says when each call comes.
export class Elector {
  /** The election's name, as given in the options. */
  readonly election: string;
  /** This candidate's id, as given in the options or the default `hostname:pid:random`. */
  readonly candidateId: string;
  /**
   * What this Elector holds leases under: `candidateId`, a space and a nonce no other Elector of
   * this election has, so that two processes started with one candidate id never share a term.
   * This process's Electors of the candidate in other elections share the nonce, so backends can
   * batch their calls into one statement per holder (see instance-id.ts).
   */
  readonly instanceId: string;
  /** The options with their defaults filled in (`renewMs`, `retryMs`, `safetyMarginMs`, …). */
  readonly options: Readonly<ResolvedElectorOptions>;

  private readonly driver: ElectorDriver;

  // The streams are made on first use (see LeadershipSignals): most Electors of a process that
  // runs thousands of elections are never observed.

  /**
   * Every change of `state` (role, leader, token, reason). Replays the current state to a new
   * subscriber and never emits the same state twice in a row.
   */
  get state$(): Observable<LeadershipState> {
    return this.driver.signals.state$;
  }
  /**
   * Whether this candidate leads: true when a term starts, false when it ends (on this process's
   * monotonic clock, at the latest at the term's deadline). Replays the current value; emits
   * changes only.
   */
  get isLeader$(): Observable<boolean> {
    return this.driver.signals.isLeader$;
  }
  /**
   * Who leads, as far as this candidate can see (a candidate id, or `null` when nobody or not
   * known). Replays the current value; emits changes only.
   */
  get leader$(): Observable<string | null> {
    return this.driver.signals.leader$;
  }
  /** One event each time this candidate becomes leader, with the new term's token. Does not replay. */
  get elected$(): Observable<ElectedEvent> {
    return this.driver.signals.elected$;
  }
  /** One event each time a term of this candidate ends, with its token and why. Does not replay. */
  get revoked$(): Observable<RevokedEvent> {
    return this.driver.signals.revoked$;
  }
  /**
   * Changes of `backendState` (`connected`, `suspended`, `lost`, `reconnected`), judged from the
   * outcomes of this Elector's own calls. Emits changes only; read `backendState` for the current one.
   */
  get backendState$(): Observable<BackendState> {
    return this.driver.calls.states.changes$;
  }

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
    this.driver = new ElectorDriver(setup, electorMetrics(election, backend.kind, this.options.metrics));
  }

  /** Whether the backend answers (see `BackendState`); `null` while stopped or before the first answer. */
  get backendState(): BackendState | null {
    return this.driver.calls.states.state;
  }

  /** Current state snapshot. */
  get state(): LeadershipState {
    return this.driver.signals.state;
  }

  /** Fencing token of the current term while leading, else `null`. */
  get token(): number | null {
    return this.driver.current()?.token ?? null;
  }

  /**
   * True only while this candidate leads and its lease, counted on the monotonic clock from when
   * the last successful acquire/renew was sent, minus `safetyMarginMs`, has not run out.
   * Synchronous and I/O-free: it turns false on time even if the backend never answers.
   */
  isLeader(): boolean {
    return this.driver.current() !== null;
  }

  /**
   * For liveness probes (like client-go's HealthzAdaptor): not ok when this Elector believes it
   * leads past its deadline (its timers are starved: the event loop is stuck), when the backend
   * refuses it, when a campaigning Elector's backend has not answered since `start()`, or when
   * the backend has not answered for longer than a lease.
   */
  health(): ElectorHealth {
    const { role, term, duplicate } = this.driver.snapshot;
    const { calls } = this.driver;
    return judgeHealth({
      nowMs: performance.now(),
      role,
      term,
      candidateId: this.candidateId,
      leaseMs: this.options.leaseMs,
      failures: calls.failures,
      lastFailure: calls.lastFailure,
      lastContactAt: calls.lastContactAt,
      answered: calls.answered,
      refusal: calls.refusal(),
      duplicateLeader: duplicate,
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
    return this.driver.start();
  }

  /**
   * Stops campaigning and releases leadership if held, once the term's work has ended (see
   * `whileLeader` for the order). Idempotent; never rejects. The role turns `stopped` when this is
   * called (a leader goes from `leader` straight to `stopped`; `revoked$` reports `stopped`); the
   * promise resolves once the release has returned.
   */
  stop(): Promise<void> {
    return this.driver.stop();
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
    return this.driver.stepDown();
  }

  /** Stops campaigning without stopping; a leader steps down and releases (as `stepDown()`). */
  pause(): void {
    this.driver.pause();
  }

  /** Campaigns again after `pause()`. */
  resume(): void {
    this.driver.resume();
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
    const unregister = this.driver.tasks.add(task);
    const current = this.driver.current();
    if (current) this.driver.tasks.run(task, current);
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
          const current = this.driver.current();
          return current ? { token: current.token, signal: current.controller.signal } : null;
        },
        stopped: () => this.driver.snapshot.role === 'stopped',
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
}
