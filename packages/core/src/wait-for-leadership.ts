import type { Observable, Subscription } from 'rxjs';
import { ConclaveError } from './errors';
import { assertOptionKeys, optionKeys } from './option-keys';
import { describe } from './validation';

/** The longest delay a Node timer keeps (about 24.8 days); longer ones would fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Options of `elector.waitForLeadership(options)`. */
export interface WaitForLeadershipOptions {
  /** Longest wait, ms: a whole number from 0 (only look) to MAX_TIMER_MS. Default: no limit. */
  timeoutMs?: number;
  /** Aborting it ends the wait with `ABORTED`. */
  signal?: AbortSignal;
}

const WAIT_OPTION_KEYS = optionKeys<WaitForLeadershipOptions>({ timeoutMs: true, signal: true });

/** What waiting needs to see of an Elector. */
export interface LeadershipSource<T> {
  readonly election: string;
  /** The current term while this candidate leads (isLeader() is true), else `null`. */
  current(): T | null;
  /** Whether the Elector is stopped, i.e. not campaigning. */
  stopped(): boolean;
  /** Emits whenever the state changes (a replay of the current state on subscribe is fine). */
  readonly changes: Observable<unknown>;
}

/** Throws `INVALID_OPTIONS` unless `ms` is a whole number of ms that a timer can wait. */
export function assertDelayMs(ms: unknown, option: string, election?: string): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_TIMER_MS) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `${option} must be a whole number of ms from 0 to ${MAX_TIMER_MS}, got ${describe(ms)}`,
      { election },
    );
  }
}

/** Throws `INVALID_OPTIONS` unless `signal` is undefined or an AbortSignal. */
export function assertSignal(signal: unknown, election?: string): asserts signal is AbortSignal | undefined {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new ConclaveError('INVALID_OPTIONS', `signal must be an AbortSignal, got ${describe(signal)}`, { election });
  }
}

/** Validates `waitForLeadership` options; throws `INVALID_OPTIONS`, does nothing else. */
export function resolveWaitOptions(options: unknown, election: string): { timeoutMs?: number; signal?: AbortSignal } {
  if (options === undefined) return {};
  assertOptionKeys(options, WAIT_OPTION_KEYS, 'waitForLeadership options');
  const { timeoutMs, signal } = options as WaitForLeadershipOptions;
  if (timeoutMs !== undefined) assertDelayMs(timeoutMs, 'timeoutMs', election);
  assertSignal(signal, election);
  return { timeoutMs, signal };
}

/**
 * Resolves with the current term once `source` leads (at once if it does). Rejects with
 * `INVALID_OPTIONS` for bad options, `ABORTED` when the signal aborts, `TIMEOUT` when
 * `timeoutMs` passes, `STOPPED` when the Elector is or becomes stopped. Every path removes its
 * timer, its abort listener and its subscription.
 */
export function waitForLeadership<T>(source: LeadershipSource<T>, options?: WaitForLeadershipOptions): Promise<T> {
  let timeoutMs: number | undefined;
  let signal: AbortSignal | undefined;
  try {
    ({ timeoutMs, signal } = resolveWaitOptions(options, source.election));
  } catch (err) {
    return Promise.reject(err);
  }
  const election = source.election;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let subscription: Subscription | undefined;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      subscription?.unsubscribe();
      settle();
    };
    const onAbort = () =>
      finish(() => reject(new ConclaveError('ABORTED', 'the wait for leadership was aborted', { election, cause: signal!.reason })));
    const check = () => {
      const term = source.current();
      if (term !== null) finish(() => resolve(term));
      else if (source.stopped()) {
        finish(() => reject(new ConclaveError('STOPPED', 'the Elector stopped (or was not started) before it was elected', { election })));
      }
    };

    // An abort the caller already made wins over a leadership they no longer want.
    if (signal?.aborted) return onAbort();
    check();
    if (settled) return;
    if (timeoutMs === 0) {
      return finish(() => reject(new ConclaveError('TIMEOUT', 'not elected (timeoutMs 0: looked once)', { election })));
    }
    subscription = source.changes.subscribe(check);
    if (settled) {
      // The subscription replayed a state that settled the wait before it was assigned.
      subscription.unsubscribe();
      return;
    }
    if (timeoutMs !== undefined) {
      timer = setTimeout(
        () => finish(() => reject(new ConclaveError('TIMEOUT', `not elected within ${timeoutMs} ms`, { election }))),
        timeoutMs,
      );
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
