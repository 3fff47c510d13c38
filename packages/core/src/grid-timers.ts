import { performance } from 'node:perf_hooks';

interface Slot {
  timer: NodeJS.Timeout;
  callbacks: Set<() => void>;
}

/**
 * One timer per slot of a grid on the `performance.now()` timeline, shared by every Elector of
 * the process. Electors whose renewals (or polls) fall in the same slot then run in the same
 * callback, in one event-loop turn, so a backend's TickBatcher sends them as one batch. Separate
 * timers with fractional delays would straddle libuv's millisecond ticks and split the batch.
 */
export class GridTimers {
  private readonly slots = new Map<number, Slot>();
  /** The slot whose callbacks are running, taken out of `slots` already. */
  private running: { slotMs: number; callbacks: Set<() => void> } | null = null;

  /** Runs `callback` at `slotMs` (an integer on the performance.now() timeline); returns a cancel function. */
  at(slotMs: number, callback: () => void): () => void {
    const entry = () => callback();
    this.add(slotMs, entry);
    return () => this.remove(slotMs, entry);
  }

  /**
   * Runs `callback` at `slotMs`, like `at`, without making a cancel function: an Elector arms a
   * step every renew interval, thousands of them a second in a busy process. A callback is in a
   * slot once at most; `remove` takes it out.
   */
  add(slotMs: number, callback: () => void): void {
    let slot = this.slots.get(slotMs);
    if (!slot) {
      const callbacks = new Set<() => void>();
      const timer = setTimeout(() => {
        this.slots.delete(slotMs);
        const outer = this.running;
        this.running = { slotMs, callbacks };
        for (const run of callbacks) {
          try {
            run();
          } catch {
            // A callback's failure must not stop the others; Electors guard their own steps.
          }
        }
        this.running = outer;
      }, Math.max(0, slotMs - performance.now()));
      slot = { timer, callbacks };
      this.slots.set(slotMs, slot);
    }
    slot.callbacks.add(callback);
  }

  /** Takes `callback` out of the slot at `slotMs`, if it is there and the slot has not run yet. */
  remove(slotMs: number, callback: () => void): void {
    // A callback of the slot now running may cancel another one of it, which then must not run.
    if (this.running?.slotMs === slotMs) this.running.callbacks.delete(callback);
    const slot = this.slots.get(slotMs);
    if (!slot || !slot.callbacks.delete(callback) || slot.callbacks.size > 0) return;
    clearTimeout(slot.timer);
    this.slots.delete(slotMs);
  }
}

/** The process-wide grid timers. */
export const gridTimers = new GridTimers();
