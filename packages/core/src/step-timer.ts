import { gridTimers } from './grid-timers';

/** When the next step is due: after `delayMs` on a timer of its own, or at a shared grid slot. */
export type StepAt = { delayMs: number } | { slotMs: number };

/**
 * The one timer that arms an Elector's next step: a plain timeout, or a slot of the shared grid
 * (see GridTimers) so that Electors whose steps fall together call their backend in one turn.
 * Arming replaces what was armed. Arming makes no closure: a leader arms a step every renew
 * interval, and a process may lead thousands of elections.
 */
export class StepTimer {
  /** The slot armed on the grid, or null. */
  private slotMs: number | null = null;
  private timeout: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** Runs the step: the armed timer has fired, so nothing is armed any more. */
  private readonly due = () => {
    this.slotMs = null;
    this.timeout = null;
    this.immediate = null;
    this.fire();
  };

  constructor(private readonly fire: () => void) {}

  arm(at: StepAt): void {
    this.cancel();
    if ('slotMs' in at) {
      this.slotMs = at.slotMs;
      gridTimers.add(at.slotMs, this.due);
    } else if (at.delayMs <= 0) {
      // A step due now (a pushed change, start, resume) runs on the loop's next turn: a timer of
      // 0 ms waits at least 1 ms, a tick added to every hand-over.
      this.immediate = setImmediate(this.due);
    } else {
      this.timeout = setTimeout(this.due, at.delayMs);
    }
  }

  /** Arms the step after `delayMs`. */
  schedule(delayMs: number): void {
    this.arm({ delayMs });
  }

  cancel(): void {
    if (this.slotMs !== null) gridTimers.remove(this.slotMs, this.due);
    if (this.timeout !== null) clearTimeout(this.timeout);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.slotMs = null;
    this.timeout = null;
    this.immediate = null;
  }
}
