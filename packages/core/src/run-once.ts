import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Elector, LeaseContext } from './elector';
import { ConclaveError, isConclaveError } from './errors';
import { assertOptionsObject } from './validation';
import { assertDelayMs, assertSignal } from './wait-for-leadership';

export interface RunOnceOptions {
  /**
   * How long to try to be elected, ms. 0 (the default) tries once: the first campaign decides.
   * A longer wait also covers a winner that dies before its task ran (it takes up to a lease).
   */
  waitMs?: number;
  /**
   * Keep the lease until this long after the task started, ms (default 0), even when the task
   * ends sooner, so candidates that try a little later (clocks apart, a slow start) find the
   * election taken instead of running the task again.
   */
  holdAtLeastMs?: number;
  /**
   * Aborting it ends the wait (`ABORTED`), or, once the task runs, aborts the task's signal and
   * skips the hold.
   */
  signal?: AbortSignal;
}

export type RunOnceResult<T> = { ran: true; result: T } | { ran: false };

export type OnceTask<T> = (lease: LeaseContext) => Promise<T> | T;

/**
 * Campaigns, and if elected within `waitMs` runs `task` once, holds the lease until
 * `holdAtLeastMs` after the task started, releases and resolves `{ ran: true, result }`;
 * resolves `{ ran: false }` when not elected in time. See `Elector.runOnce`.
 */
export async function runOnce<T>(elector: Elector, task: OnceTask<T>, options: RunOnceOptions = {}): Promise<RunOnceResult<T>> {
  const election = elector.election;
  if (typeof task !== 'function') throw new ConclaveError('INVALID_OPTIONS', 'runOnce needs a function', { election });
  assertOptionsObject(options, 'runOnce options');
  const { waitMs = 0, holdAtLeastMs = 0, signal } = options;
  assertDelayMs(waitMs, 'waitMs', election);
  assertDelayMs(holdAtLeastMs, 'holdAtLeastMs', election);
  assertSignal(signal, election);
  if (signal?.aborted) throw new ConclaveError('ABORTED', 'runOnce was aborted', { election, cause: signal.reason });

  const startedAt = performance.now();
  let lease: LeaseContext;
  try {
    await elector.start();
    // The first campaign has had its answer; what is left of the wait is for later ones.
    const left = Math.max(0, Math.round(waitMs - (performance.now() - startedAt)));
    lease = await elector.waitForLeadership({ timeoutMs: left, signal });
  } catch (err) {
    // Not elected because the backend did not answer is not "another candidate has it".
    const unanswered = elector.health().consecutiveFailures > 0;
    await elector.stop();
    if (isConclaveError(err, 'TIMEOUT') && unanswered) {
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'not elected: the backend did not answer the last campaign', { election, cause: err });
    }
    if (isConclaveError(err, 'TIMEOUT')) return { ran: false };
    throw err;
  }

  // The task's signal: the term's, and the caller's.
  const controller = new AbortController();
  const onTermEnd = () => controller.abort(lease.signal.reason);
  const onAbort = () => controller.abort(signal!.reason);
  lease.signal.addEventListener('abort', onTermEnd, { once: true });
  signal?.addEventListener('abort', onAbort, { once: true });
  if (lease.signal.aborted) onTermEnd();
  try {
    const taskStartedAt = performance.now();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await task({ token: lease.token, signal: controller.signal }) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // A task that failed holds too: a failure is no reason to let another candidate run it again now.
    // A loop, as a timer may fire a little before performance.now() says its delay has passed.
    for (;;) {
      const holdLeft = holdAtLeastMs - (performance.now() - taskStartedAt);
      if (holdLeft <= 0 || controller.signal.aborted) break;
      await sleep(Math.ceil(holdLeft), undefined, { signal: controller.signal }).catch(() => undefined);
    }
    if (!outcome.ok) throw outcome.error;
    return { ran: true, result: outcome.value };
  } finally {
    lease.signal.removeEventListener('abort', onTermEnd);
    signal?.removeEventListener('abort', onAbort);
    await elector.stop();
  }
}
