/**
 * Coalesces the calls made in one event-loop turn into one batch, so a process that holds many
 * elections renews them in one round trip. The core schedules the timers of Electors that share a
 * backend on a common grid, so their calls land in the same turn.
 */
export class TickBatcher<Request, Result> {
  private pending: Array<{ request: Request; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  /**
   * @param flush  runs one batch; resolves with one result per request, in order, or rejects
   *               (then every request of the batch rejects with that error).
   * @param maxBatch  largest batch sent at once; a larger turn is split.
   */
  constructor(
    private readonly flush: (requests: Request[]) => Promise<Result[]>,
    private readonly maxBatch = 1000,
  ) {}

  submit(request: Request): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.pending.push({ request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.run());
      }
    });
  }

  private run(): void {
    this.scheduled = false;
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += this.maxBatch) {
      const chunk = all.slice(i, i + this.maxBatch);
      let batch: Promise<Result[]>;
      try {
        batch = this.flush(chunk.map((c) => c.request));
      } catch (err) {
        batch = Promise.reject(err);
      }
      batch.then(
        (results) => {
          chunk.forEach((c, n) => {
            if (n < results.length) c.resolve(results[n] as Result);
            else c.reject(new Error(`batch returned ${results.length} results for ${chunk.length} requests`));
          });
        },
        (err: unknown) => chunk.forEach((c) => c.reject(err)),
      );
    }
  }
}
