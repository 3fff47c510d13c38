import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `predicate` every `intervalMs` until it returns a truthy value, and returns that value;
 * rejects with a message naming `what` after `timeoutMs`. Generous timeouts are the point: tests
 * check behaviour, not speed (speed is measured in bench/).
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 10,
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(intervalMs);
  }
}

export { delay };
