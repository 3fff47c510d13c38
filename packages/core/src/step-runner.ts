import type { PacingDecision } from './elector-pacing';
import type { ElectorSetup } from './elector-standing';
import { gridTimers } from './grid-timers';

/** What the runner calls back into. */
export interface StepHooks {
  /** The armed timer fired: take the step the role calls for. */
  step(): void;
  /** A step or a pushed change came while a call was in flight, which has now returned. */
  wake(): void;
  /** A pacing decision said the lease is over: end the term now. */
  stepDown(): void;
}

/**
 * When an Elector calls its backend next, and that it makes one call at a time: one timer (a
 * plain timeout or a slot of the shared grid) arms the next step, and a step or a pushed change
 * that comes while a call is in flight waits until that call has returned.
 */
export class StepRunner {
  /** Cancels the next scheduled step (a plain timer or a grid slot). */
  private cancelStep: (() => void) | null = null;
  private busyRun: Promise<void> | null = null;
  private wakeRequested = false;
  /**
   * The step armed is a follower's look at the end of the lease its last campaign answer named,
   * which a pushed lease end may move (see `onLeaseEndPushed`). Set by the campaigner right after
   * arming that look; anything else armed or cancelled clears it.
   */
  leaseEndLook = false;

  constructor(
    private readonly setup: ElectorSetup,
    private readonly hooks: StepHooks,
  ) {}

  /**
   * Arms what a pacing decision names. The step itself does what the role calls for when it runs
   * (the role may change before the timer fires).
   */
  follow(next: PacingDecision): void {
    if (next.action === 'step-down') this.hooks.stepDown();
    else if (next.action === 'wait-for-push') this.leaseEndLook = false;
    else if ('slotMs' in next) this.scheduleAtSlot(next.slotMs);
    else this.schedule(next.delayMs);
  }

  schedule(delayMs: number): void {
    this.cancel();
    const fire = () => {
      this.cancelStep = null;
      this.leaseEndLook = false;
      this.hooks.step();
    };
    if (delayMs <= 0) {
      // A step due now (a pushed change, start, resume) runs on the loop's next turn: a timer of
      // 0 ms waits at least 1 ms, a tick added to every hand-over.
      const immediate = setImmediate(fire);
      this.cancelStep = () => clearImmediate(immediate);
      return;
    }
    const timer = setTimeout(fire, delayMs);
    this.cancelStep = () => clearTimeout(timer);
  }

  /** Schedules the next step on a shared grid slot (see GridTimers): batched with other Electors. */
  private scheduleAtSlot(slotMs: number): void {
    this.cancel();
    const cancel = gridTimers.at(slotMs, () => {
      this.cancelStep = null;
      this.leaseEndLook = false;
      this.hooks.step();
    });
    this.cancelStep = cancel;
  }

  cancel(): void {
    this.cancelStep?.();
    this.cancelStep = null;
    this.leaseEndLook = false;
  }

  /** Whether a call is in flight. */
  get busy(): boolean {
    return this.busyRun !== null;
  }

  /** While a call is in flight: remembers to wake when it returns, and says true. */
  deferIfBusy(): boolean {
    if (!this.busyRun) return false;
    this.wakeRequested = true;
    return true;
  }

  /** Runs one backend operation at a time; a wake asked for meanwhile follows it. */
  exclusive(op: () => Promise<void>): Promise<void> {
    const run = (async () => {
      try {
        await op();
      } catch (err) {
        // op handles its own errors; this is a last guard against an unhandled rejection.
        this.setup.log.error({ ...this.setup.context(), err }, 'unexpected error in election loop');
      } finally {
        this.busyRun = null;
        if (this.wakeRequested) {
          this.wakeRequested = false;
          this.hooks.wake();
        }
      }
    })();
    this.busyRun = run;
    return run;
  }

  /** Waits for the call in flight, then runs `op` as the next one. */
  async afterCurrent(op: () => Promise<void>): Promise<void> {
    while (this.busyRun) await this.busyRun;
    await this.exclusive(op);
  }
}
