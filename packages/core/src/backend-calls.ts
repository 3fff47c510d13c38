import { performance } from 'node:perf_hooks';
import { BackendStateTracker } from './backend-state';
import type { ElectorSetup } from './elector-setup';
import { ConclaveError, isPermanentError } from './errors';
import { gridTimers } from './grid-timers';
import type { ElectorMetrics } from './metrics';
import { UnreachableWarning } from './unreachable-warning';

/** What the call is for, as `conclave.operation.name` names it. */
export type CallOperation = 'campaign' | 'renew' | 'release';

/**
 * An Elector's calls to its backend: each one bounded in time and measured, and their outcomes
 * judged together for whether the backend answers (the failure count, `backendState`, the
 * unreachable warning, the last contact that `health()` reads).
 */
export class BackendCalls {
  readonly states = new BackendStateTracker();
  /** Failed calls since the last one that succeeded. */
  failures = 0;
  /** The error of the last failed call (while `failures` > 0). */
  lastFailure: unknown = null;
  /** performance.now() of the last call that succeeded. */
  lastContactAt = 0;
  /** Whether a call has succeeded since start(): until then, `health()` is not ok. */
  answered = false;

  private readonly unreachableWarning: UnreachableWarning | null = null;
  /**
   * The controller of the last call, which ended before we gave up on it: the next call reuses it
   * (most calls are never given up on, and an AbortController per renewal is a large part of what
   * a process leading thousands of elections allocates). One that aborted is never reused.
   */
  private spareController: AbortController | null = null;

  /** `lastToken`: the highest token the Elector has led with, for a tokenless release. */
  constructor(
    private readonly setup: ElectorSetup,
    private readonly metrics: ElectorMetrics,
    private readonly lastToken: () => number | null,
  ) {
    if (setup.options.warnUnreachable) {
      this.unreachableWarning = new UnreachableWarning(this, setup.backend.kind);
      this.states.listen(this.unreachableWarning);
    }
  }

  /** The election, for the unreachable warning. */
  get election(): string {
    return this.setup.election;
  }

  /** The backend object, for the unreachable warning (elections sharing it share one warning). */
  get backend(): object {
    return this.setup.backend;
  }

  /** On start: no failures yet, and silence is counted from now. */
  restart(): void {
    this.failures = 0;
    this.lastContactAt = performance.now();
    this.answered = false;
  }

  /** On stop: the state starts afresh, and a stopped Elector is no outage. */
  forget(): void {
    this.states.reset();
    this.unreachableWarning?.forget();
  }

  /**
   * Makes a backend call bounded by `timeoutMs` and records its duration and outcome. The call is
   * told when we give up on it (`deadlineMs`) and learns it when we do (`signal`): the next call
   * may follow at once, while this one still runs (see ElectionBackend, "Calls the core gives up on").
   * Giving up rejects with `BACKEND_UNAVAILABLE` and `timeoutMessage`. A call that ended first
   * leaves its signal, never aborted, to the next call (see `CallTiming.signal`).
   */
  timed<T>(
    operation: CallOperation,
    send: (timing: { signal: AbortSignal; deadlineMs: number }) => Promise<T>,
    timeoutMs: number,
    timeoutMessage: string,
  ): Promise<T> {
    const controller = this.spareController ?? new AbortController();
    this.spareController = null;
    const deadlineMs = performance.now() + timeoutMs;
    let call: Promise<T>;
    try {
      call = send({ signal: controller.signal, deadlineMs });
    } catch (err) {
      call = Promise.reject(err);
    }
    const started = performance.now();
    // One promise per call, no more: a leader of thousands of elections makes thousands of these
    // a second. A late answer, or a late failure, is ignored.
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const failed = (err: unknown) => {
        // error.type: the stable error code, else the error's class; never its message.
        const type = err instanceof ConclaveError ? err.code : err instanceof Error ? err.name : '_OTHER';
        this.metrics.backendCall(operation, performance.now() - started, type);
        reject(err);
      };
      // A slot of the shared grid, not a timer per call: a leader of thousands of elections makes
      // thousands of calls a second, and those sent in one turn give up in one slot. The slot is
      // the whole millisecond at or before the timeout (giving up a fraction early is safe).
      const giveUpAt = Math.floor(deadlineMs);
      const giveUp = () => {
        done = true;
        const err = this.unavailable(timeoutMessage);
        controller.abort(err);
        failed(err);
      };
      gridTimers.add(giveUpAt, giveUp);
      // The answer came first: the timer goes, and the controller, never aborted, serves again.
      const answered = (): boolean => {
        if (done) return false;
        done = true;
        gridTimers.remove(giveUpAt, giveUp);
        this.spareController = controller;
        return true;
      };
      call.then(
        (value) => {
          if (!answered()) return;
          this.lastContactAt = performance.now();
          this.answered = true;
          this.metrics.backendCall(operation, this.lastContactAt - started);
          resolve(value);
        },
        (err: unknown) => {
          if (answered()) failed(err);
        },
      );
    });
  }

  /** Releases leadership (the term of `token` only) and candidacy; logs, never throws. */
  async release(token: number | null): Promise<void> {
    const { backend, election, instanceId, options, log } = this.setup;
    try {
      await this.timed(
        'release',
        (timing) =>
          backend.release({
            election,
            candidateId: instanceId,
            token,
            // A release that lands late must not end a term this Elector has not seen yet.
            ...(token === null ? { notAbove: this.lastToken() ?? 0 } : {}),
            ...timing,
          }),
        options.leaseMs,
        'release timed out',
      );
    } catch (err) {
      log.warn({ ...this.setup.context(), err }, 'release failed; the lease will expire on the server');
    }
  }

  /** A call failed; `what` names it in the log line. */
  failed(what: string, err: unknown): void {
    this.failures++;
    this.lastFailure = err;
    // The backend state follows whether the backend answers: a refusal (MIGRATION_CONFLICT, say)
    // is an answer, and a backend closed by its owner is no outage. A backend that refuses our
    // credentials or configuration serves us no better than one that is gone: with no logger,
    // the unreachable warning is what says so.
    const code = err instanceof ConclaveError ? err.code : null;
    if (code === null || code === 'BACKEND_UNAVAILABLE' || code === 'BACKEND_ERROR' || isPermanentError(err)) {
      this.states.failed(performance.now() - this.lastContactAt, this.setup.options.leaseMs);
    } else if (!isClosed(err)) {
      this.states.answered();
    }
    const { log } = this.setup;
    const context = { ...this.setup.context(), failures: this.failures, err };
    if (isRefusal(err)) {
      // A deployment mistake, not an outage: say it every time, loudly.
      log.error(context, `${what} refused`);
      return;
    }
    // Warn on the first failure and then at powers of two, so an outage does not flood the log.
    if ((this.failures & (this.failures - 1)) === 0) log.warn(context, `${what} failed`);
    else log.debug(context, `${what} failed`);
  }

  /** A call succeeded. */
  succeeded(): void {
    if (this.failures > 0) this.setup.log.info({ ...this.setup.context(), failures: this.failures }, 'backend reachable again');
    this.failures = 0;
    this.states.answered();
  }

  /**
   * A leader gave up a term it could not renew in time: the backend is out of reach for our
   * purpose, unless its owner closed it.
   */
  gaveUpOnLease(): void {
    if (!isClosed(this.lastFailure)) this.states.gaveUp();
  }

  /** The refusal the last call failed with, if it was one (a `health()` problem). */
  refusal(): ConclaveError | null {
    return this.failures > 0 && isRefusal(this.lastFailure) ? this.lastFailure : null;
  }

  private unavailable(message: string): ConclaveError {
    const { election, backend } = this.setup;
    return new ConclaveError('BACKEND_UNAVAILABLE', message, { election, backend: backend.kind });
  }
}

/** A backend closed by its owner: calls fail, but nothing is out of reach. */
function isClosed(err: unknown): boolean {
  return err instanceof ConclaveError && err.code === 'CLOSED';
}

/**
 * A call the backend answered with a refusal: MIGRATION_CONFLICT, or a configuration that cannot
 * work (BACKEND_AUTH, BACKEND_MISCONFIGURED, say a password rotated under a running Elector).
 */
function isRefusal(err: unknown): err is ConclaveError {
  return (err instanceof ConclaveError && err.code === 'MIGRATION_CONFLICT') || isPermanentError(err);
}
