/**
 * One backend call of an Elector at a time. A step that comes while a call is in flight is
 * deferred (`defer`): `wake` runs once that call has returned.
 */
export class CallLane {
  private current: Promise<void> | null = null;
  private wakeRequested = false;
  // Made once: a leader runs a call every renew interval, and a process may lead thousands.
  private readonly ended = (): void => {
    this.current = null;
    if (this.wakeRequested) {
      this.wakeRequested = false;
      this.wake();
    }
  };
  private readonly threw = (err: unknown): void => {
    // A last guard against an unhandled rejection.
    this.onError(err);
    this.ended();
  };

  /** `onError`: an operation threw, which it should not (each handles its own errors). */
  constructor(
    private readonly wake: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Whether a call is in flight. */
  get busy(): boolean {
    return this.current !== null;
  }

  /** Wake once the call in flight has returned. */
  defer(): void {
    this.wakeRequested = true;
  }

  /** Runs `op` as the call in flight; a wake asked for meanwhile follows it. */
  run(op: () => Promise<void>): Promise<void> {
    let started: Promise<void>;
    try {
      started = op();
    } catch (err) {
      started = Promise.reject(err);
    }
    const run = started.then(this.ended, this.threw);
    this.current = run;
    return run;
  }

  /** Waits for the call in flight, then runs `op` as the next one. */
  async after(op: () => Promise<void>): Promise<void> {
    while (this.current) await this.current;
    await this.run(op);
  }
}
