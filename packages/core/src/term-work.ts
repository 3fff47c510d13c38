import { performance } from 'node:perf_hooks';

/**
 * The work running in each term (its `whileLeader` tasks, a `runOnce` task), keyed by the term's
 * signal: what a voluntary end of the term waits for before it releases the lease, so that the
 * next leader's work never starts beside this one's. Keyed by the signal because that is what
 * every holder of a term has (`runOnce` sees only its LeaseContext).
 */
const running = new WeakMap<AbortSignal, Set<Promise<unknown>>>();

/** Counts `work` as running in the term of `signal` until it settles. */
export function trackTermWork(signal: AbortSignal, work: Promise<unknown>): void {
  let set = running.get(signal);
  if (!set) running.set(signal, (set = new Set()));
  const entry = work.then(
    () => undefined,
    () => undefined,
  );
  set.add(entry);
  void entry.then(() => set.delete(entry));
}

/**
 * Resolves once the work of the term of `signal` has settled, or at `deadlineMs` (on
 * performance.now()) if it has not: past the deadline the lease, not this process, protects the
 * next leader, so a task that ignores its signal cannot hold the election.
 */
export function termWorkSettled(signal: AbortSignal, deadlineMs: number): Promise<void> {
  const set = running.get(signal);
  const waitMs = deadlineMs - performance.now();
  if (!set || set.size === 0 || waitMs <= 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    void Promise.all(set).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
