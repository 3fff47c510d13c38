import { performance } from 'node:perf_hooks';

/**
 * One timer per slot of a grid on the `performance.now()` timeline, shared by every Elector of
 * the process. Electors whose renewals (or polls) fall in the same slot then run in the same
 * callback, in one event-loop turn, so a backend's TickBatcher sends them as one batch. Separate
 * timers with fractional delays would straddle libuv's millisecond ticks and split the batch.
 */
export class GridTimers {
  private readonly slots = new Map<number, { timer: NodeJS.Timeout; callbacks: Set<() => void> }>();

  /** Runs `callback` at `slotMs` (an integer on the performance.now() timeline); returns a cancel function. */
  at(slotMs: number, callback: () => void): () => void {
    let slot = this.slots.get(slotMs);
    if (!slot) {
      const callbacks = new Set<() => void>();
      const timer = setTimeout(() => {
        this.slots.delete(slotMs);
        for (const run of callbacks) {
          try {
            run();
          } catch {
            // A callback's failure must not stop the others; Electors guard their own steps.
          }
        }
      }, Math.max(0, slotMs - performance.now()));
      slot = { timer, callbacks };
      this.slots.set(slotMs, slot);
    }
    const entry = () => callback();
    const current = slot;
    current.callbacks.add(entry);
    return () => {
      current.callbacks.delete(entry);
      if (current.callbacks.size === 0 && this.slots.get(slotMs) === current) {
        clearTimeout(current.timer);
        this.slots.delete(slotMs);
      }
    };
  }
}

/** The process-wide grid timers. */
export const gridTimers = new GridTimers();
