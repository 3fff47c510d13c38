import { gridTimers } from './grid-timers';

/** When the next step is due: after `delayMs` on a timer of its own, or at a shared grid slot. */
export type StepAt = { delayMs: number } | { slotMs: number };

/**
 * The one timer that arms an Elector's next step: a plain timeout, or a slot of the shared grid
 * (see GridTimers) so that Electors whose steps fall together call their backend in one turn.
 * Arming replaces what was armed.
 */
export class StepTimer {
  private cancelStep: (() => void) | null = null;

  constructor(private readonly fire: () => void) {}

  arm(at: StepAt): void {
    this.cancel();
    const fire = () => {
      this.cancelStep = null;
      this.fire();
    };
    if ('slotMs' in at) {
      this.cancelStep = gridTimers.at(at.slotMs, fire);
    } else if (at.delayMs <= 0) {
      // A step due now (a pushed change, start, resume) runs on the loop's next turn: a timer of
      // 0 ms waits at least 1 ms, a tick added to every hand-over.
      const immediate = setImmediate(fire);
      this.cancelStep = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(fire, at.delayMs);
      this.cancelStep = () => clearTimeout(timer);
    }
  }

  /** Arms the step after `delayMs`. */
  schedule(delayMs: number): void {
    this.arm({ delayMs });
  }

  cancel(): void {
    this.cancelStep?.();
    this.cancelStep = null;
  }
}
