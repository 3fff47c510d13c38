import { performance } from 'node:perf_hooks';
import { ConclaveError } from './errors';
import { givenUpError } from './given-up';

/**
 * How many campaigns one backend runs at once, at most, by default. A campaign is several round
 * trips one after another, often on one connection that the server answers in order: with
 * thousands running together (one Elector per election, all started at once) each round trip
 * waits behind all the others' and no campaign ends before its caller gives up, so none ever
 * does. With a bound, the campaigns admitted end quickly and the connection stays as busy as it
 * can be.
 */
export const CAMPAIGNS_AT_ONCE = 128;
/** The bound is never cut below this (see `CampaignSlots`). */
const FEWEST = 8;
/** A cut waits this long after the previous one, ms: the campaigns then running were late too. */
const CUT_EVERY_MS = 1000;

/**
 * The deadline sweep runs at most this often, ms. A waiter with a signal leaves when its caller
 * gives up, which the core does at the deadline; the sweep is for callers that never abort.
 */
const SWEEP_EVERY_MS = 50;

interface Waiter {
  /** Left (gave up or timed out): skipped when its turn comes. */
  gone: boolean;
  /** When it stops waiting, `performance.now()` ms. */
  until: number;
  /** Hands it the slot of a campaign that ended. */
  admit: () => void;
  /** Its deadline passed: it leaves, having sent nothing. */
  expire: () => void;
}

/**
 * Admission for campaigns: at most `limit` run, the others wait without sending anything. The
 * newest waiter goes first: under overload, the callers that waited longest are the nearest to
 * giving up, and a campaign abandoned halfway is work the server did for nothing. A waiter whose
 * caller gives up (`signal`) leaves at once, having sent nothing, and fails with the signal's
 * reason when that is a `ConclaveError` (the core's), else with a `BACKEND_UNAVAILABLE` of its
 * own; one whose deadline passes first leaves within `SWEEP_EVERY_MS` after it.
 *
 * The bound adapts, as TCP's congestion window does (additive increase, multiplicative
 * decrease): a campaign that ends after its caller gave up, having run for more than half of what
 * its caller allowed it, halves it (a slow server or a starved process makes even `limit`
 * campaigns too many to end in time); one that ends in time raises it by 1/limit, up to `most`.
 * A campaign admitted near its deadline, after a long wait, and late only for that, says nothing
 * of the server: when thousands wait (a process that led thousands of elections died, and their
 * successors here campaign at once), the last admitted would otherwise cut the bound to its floor.
 */
export class CampaignSlots {
  private running = 0;
  private limit: number;
  private readonly fewest: number;
  private lastCutAt = -Infinity;
  /** Newest last; those that left are dropped when reached. */
  private waiting: Waiter[] = [];
  /** How many of `waiting` left. */
  private gone = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepAt = Infinity;
  private lastSweepAt = -Infinity;

  constructor(
    /** The backend's kind, for errors. */
    private readonly kind: string,
    private readonly most = CAMPAIGNS_AT_ONCE,
  ) {
    this.limit = most;
    this.fewest = Math.min(FEWEST, most);
  }

  /** The bound now (see the class comment). */
  bound(): number {
    return Math.floor(this.limit);
  }

  /**
   * Waits for a slot; resolves with the function that frees it, told whether the campaign ended
   * after its caller gave up (`late`).
   */
  async acquire(election: string, until: number, signal?: AbortSignal): Promise<(late?: boolean) => void> {
    if (signal?.aborted) throw givenUpError(signal, 'campaign', this.kind, election);
    const allowedMs = until - performance.now();
    if (this.running < this.bound()) {
      this.running++;
      return this.freer(allowedMs);
    }
    await new Promise<void>((resolve, reject) => {
      // No timer per waiter: thousands wait together under overload, and their timers would all
      // fire in one turn of the event loop, with the core's own for the same deadline.
      const stopWaiting = () => signal?.removeEventListener('abort', gaveUp);
      const leave = () => {
        stopWaiting();
        waiter.gone = true;
        this.left();
      };
      const waiter: Waiter = {
        gone: false,
        until,
        // Already taken off the list by `freer`.
        admit: () => {
          stopWaiting();
          resolve();
        },
        expire: () => {
          leave();
          reject(
            new ConclaveError('BACKEND_UNAVAILABLE', 'campaign not sent: too many campaigns of this backend were running', {
              backend: this.kind,
              election,
            }),
          );
        },
      };
      const gaveUp = () => {
        leave();
        // The core's reason is the error it reports already: no second one is built.
        const reason: unknown = signal!.reason;
        reject(reason instanceof ConclaveError ? reason : givenUpError(signal!, 'campaign', this.kind, election));
      };
      signal?.addEventListener('abort', gaveUp, { once: true });
      this.waiting.push(waiter);
      this.armSweep(until);
    });
    // The slot was handed over by the campaign that freed it (`running` unchanged).
    return this.freer(allowedMs);
  }

  /** Arms the deadline sweep for a waiter leaving at `until`, unless it runs by then already. */
  private armSweep(until: number): void {
    if (this.sweepTimer && this.sweepAt <= until) return;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    const now = performance.now();
    this.sweepAt = Math.max(until, this.lastSweepAt + SWEEP_EVERY_MS);
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(1, this.sweepAt - now));
  }

  /** Lets the waiters whose deadline passed go, and drops those that left. */
  private sweep(): void {
    this.sweepTimer = null;
    this.sweepAt = Infinity;
    const now = performance.now();
    this.lastSweepAt = now;
    // A timer may run up to a millisecond before its time on this clock (timers count whole ms).
    for (const w of this.waiting) if (!w.gone && w.until <= now + 1) w.expire();
    this.waiting = this.waiting.filter((w) => !w.gone);
    this.gone = 0;
    let next = Infinity;
    for (const w of this.waiting) next = Math.min(next, w.until);
    if (next !== Infinity) this.armSweep(next);
  }

  private adapt(late: boolean): void {
    if (!late) {
      this.limit = Math.min(this.most, this.limit + 1 / this.limit);
      return;
    }
    const now = performance.now();
    if (now - this.lastCutAt < CUT_EVERY_MS) return;
    this.lastCutAt = now;
    this.limit = Math.max(this.fewest, this.limit / 2);
  }

  /** A waiter left: once most have, drop them (the oldest are reached last, if ever). */
  private left(): void {
    if (++this.gone * 2 <= this.waiting.length) return;
    this.waiting = this.waiting.filter((w) => !w.gone);
    this.gone = 0;
    this.disarmIfNoneWait();
  }

  /** No waiter left: no sweep either (a pending timer would keep the process up). */
  private disarmIfNoneWait(): void {
    if (this.waiting.length > 0 || !this.sweepTimer) return;
    clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    this.sweepAt = Infinity;
  }

  /** The function that frees a slot taken now by a campaign its caller allowed `allowedMs`. */
  private freer(allowedMs: number): (late?: boolean) => void {
    let freed = false;
    const admittedAt = performance.now();
    return (late = false) => {
      if (freed) return;
      freed = true;
      if (!late) this.adapt(false);
      else if (performance.now() - admittedAt > allowedMs / 2) this.adapt(true);
      if (this.running > this.bound()) {
        // Cut since: the slot is not handed on.
        this.running--;
        return;
      }
      let next = this.waiting.pop();
      while (next?.gone) {
        this.gone--;
        next = this.waiting.pop();
      }
      if (next) next.admit();
      else this.running--;
      this.disarmIfNoneWait();
    };
  }
}
