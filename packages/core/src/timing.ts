import { performance } from 'node:perf_hooks';

/**
 * Resolves or rejects like `promise`, or rejects with `onTimeout()` after `ms`. The original
 * promise is left to settle on its own; its late rejection is swallowed here so it never becomes
 * an unhandled rejection (callers ignore late answers by design).
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * The delay, at least `minDelayMs`, until the next multiple of `gridMs` on the shared
 * `performance.now()` timeline. Timers of many Electors aligned this way fire in one turn.
 */
export function alignedDelay(minDelayMs: number, gridMs: number): number {
  const now = performance.now();
  return Math.ceil((now + minDelayMs) / gridMs) * gridMs - now;
}

/** Resolves after `ms` (a timer that is cleared if the process has nothing else to do is not needed here). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
