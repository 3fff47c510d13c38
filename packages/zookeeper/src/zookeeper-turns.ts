import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';

const KIND = 'zookeeper';

/** Per-candidate turn-taking for the calls that change a candidacy (`campaign`, `release`). */
export class CandidateTurns {
  /**
   * Per candidate (election + id): the end of the last `campaign`/`release` queued for it. Those
   * calls run one at a time, in call order, even when a caller stopped waiting for one (see
   * `serialized`).
   */
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `fn` once every earlier `campaign`/`release` of the same candidate (key `k`) has finished.
   *
   * The core runs one call per Elector at a time, but it stops waiting for a call after its own
   * timeout (a campaign after `leaseMs - safetyMarginMs`, a release after `leaseMs`), which is
   * shorter than `requestTimeoutMs`, and our requests wait for the connection to come back: the
   * call it gave up on is still running here when it makes the next one. Two such calls on one
   * candidacy interleave badly (a release deleting our node and forgetting the candidacy while a
   * campaign re-creates a node under it leaves that node, unknown to anyone, in the queue for
   * the whole session), so they take turns. Waiting for the turn counts against `until`; a call
   * that cannot get it in time fails with BACKEND_UNAVAILABLE having done nothing, and so does
   * one whose caller gives up meanwhile (`signal`).
   */
  async serialized<T>(k: string, until: number, what: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.tails.get(k);
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // The next call waits for this one, which ends after the previous one even if it gives up.
    const tail = previous ? previous.then(() => finished) : finished;
    this.tails.set(k, tail);
    try {
      if (previous && !(await settlesBy(previous, until, signal))) {
        throw new ConclaveError('BACKEND_UNAVAILABLE', `${what}: an earlier call for this candidate is still running`, {
          backend: KIND,
        });
      }
      if (signal?.aborted) {
        throw new ConclaveError('BACKEND_UNAVAILABLE', `${what} not sent: the caller gave up on it`, { backend: KIND, cause: signal.reason });
      }
      return await fn();
    } finally {
      finish();
      if (this.tails.get(k) === tail) this.tails.delete(k);
    }
  }
}

/** Whether `promise` settles by `until` (performance.now() ms) and before `signal` aborts. */
function settlesBy(promise: Promise<unknown>, until: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const end = (settled: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', gaveUp);
      resolve(settled);
    };
    const gaveUp = () => end(false);
    const timer = setTimeout(gaveUp, Math.max(0, until - performance.now()));
    if (signal?.aborted) return end(false);
    signal?.addEventListener('abort', gaveUp, { once: true });
    promise.then(
      () => end(true),
      () => end(true),
    );
  });
}
