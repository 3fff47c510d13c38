import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Elector } from './elector';
import type { LeaseContext } from './elector-types';
import { ConclaveError, isConclaveError } from './errors';
import { trackTermWork } from './term-work';
import { assertOptionKeys, optionKeys } from './option-keys';
import { assertDelayMs, assertSignal } from './wait-for-leadership';

/** Options of `runOnce`: how long to wait to be elected, how long to hold the lease. Durations in ms. */
export interface RunOnceOptions {
  /**
   * How long to try to be elected, ms. 0 (the default) tries once: the first campaign the
   * backend answers decides (a campaign that failed is tried again, for up to a lease).
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

const RUN_ONCE_OPTION_KEYS = optionKeys<RunOnceOptions>({ waitMs: true, holdAtLeastMs: true, signal: true });

/** What `runOnce` resolves with: whether this candidate ran the task, and what the task returned. */
export type RunOnceResult<T> =
  | {
      /** This candidate was elected and ran the task. */
      ran: true;
      /** What the task returned (awaited). */
      result: T;
    }
  | {
      /** Another candidate led: the task did not run here. */
      ran: false;
    };

/** The task given to `runOnce`: called once, with the term's token and a signal that aborts when the term ends. */
export type OnceTask<T> = (lease: LeaseContext) => Promise<T> | T;

/** How often to look whether a failed campaign has been answered since, ms. */
const ANSWER_POLL_MS = 50;

/**
 * Starts the Elector and waits up to `waitMs` to lead: the term, or `null` when the backend
 * answered that another candidate leads. A campaign that failed does not decide: it is tried
 * again (the Elector backs off) until one is answered, for up to a lease past `waitMs`; then
 * `BACKEND_UNAVAILABLE`, since nobody may lead.
 */
async function campaignFor(elector: Elector, waitMs: number, signal: AbortSignal | undefined): Promise<LeaseContext | null> {
  const startedAt = performance.now();
  const waitUntil = startedAt + waitMs;
  const answerBy = waitUntil + elector.options.leaseMs;
  const unanswered = () => elector.health().consecutiveFailures > 0;
  await elector.start();
  for (;;) {
    const now = performance.now();
    const timeoutMs = unanswered() ? Math.min(ANSWER_POLL_MS, answerBy - now) : waitUntil - now;
    try {
      return await elector.waitForLeadership({ timeoutMs: Math.max(0, Math.ceil(timeoutMs)), signal });
    } catch (err) {
      if (!isConclaveError(err, 'TIMEOUT')) throw err;
    }
    const after = performance.now();
    if (!unanswered() && after >= waitUntil) return null;
    if (unanswered() && after >= answerBy) {
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'not elected: no campaign was answered by the backend', {
        election: elector.election,
      });
    }
  }
}

/**
 * Campaigns, and if elected within `waitMs` runs `task` once, holds the lease until
 * `holdAtLeastMs` after the task started, releases and resolves `{ ran: true, result }`;
 * resolves `{ ran: false }` when not elected in time. See `Elector.runOnce`.
 */
export async function runOnce<T>(elector: Elector, task: OnceTask<T>, options: RunOnceOptions = {}): Promise<RunOnceResult<T>> {
  const election = elector.election;
  if (typeof task !== 'function') throw new ConclaveError('INVALID_OPTIONS', 'runOnce needs a function', { election });
  assertOptionKeys(options, RUN_ONCE_OPTION_KEYS, 'runOnce options');
  const { waitMs = 0, holdAtLeastMs = 0, signal } = options;
  assertDelayMs(waitMs, 'waitMs', election);
  assertDelayMs(holdAtLeastMs, 'holdAtLeastMs', election);
  assertSignal(signal, election);
  if (signal?.aborted) throw new ConclaveError('ABORTED', 'runOnce was aborted', { election, cause: signal.reason });

  let found: LeaseContext | null;
  try {
    found = await campaignFor(elector, waitMs, signal);
  } catch (err) {
    await elector.stop();
    throw err;
  }
  if (found === null) {
    await elector.stop();
    return { ran: false };
  }
  const term = found;

  // The task's signal: the term's, and the caller's.
  const controller = new AbortController();
  const onTermEnd = () => controller.abort(term.signal.reason);
  const onAbort = () => controller.abort(signal!.reason);
  term.signal.addEventListener('abort', onTermEnd, { once: true });
  signal?.addEventListener('abort', onAbort, { once: true });
  if (term.signal.aborted) onTermEnd();
  try {
    let taskStartedAt = performance.now();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    // The term's work: a stop() or stepDown() meanwhile releases once it has ended (see term-work.ts).
    // The hold counts from the instant the task is called, not from before the microtask that
    // calls it: what the task itself sees as its start.
    const work = Promise.resolve().then(() => {
      taskStartedAt = performance.now();
      return task({ token: term.token, signal: controller.signal });
    });
    trackTermWork(term.signal, work);
    try {
      outcome = { ok: true, value: await work };
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
    term.signal.removeEventListener('abort', onTermEnd);
    signal?.removeEventListener('abort', onAbort);
    await elector.stop();
  }
}
