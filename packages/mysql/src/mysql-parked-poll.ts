import type { MysqlExecutor } from './mysql-pool';
import { changedTermsSql } from './mysql-sql';

/** How often the parked elections are looked at, ms: a graceful release reaches their followers within this. */
export const PARKED_POLL_MS = 500;
/** Elections per statement. */
const PARKED_POLL_BATCH = 1000;

/** A follower's wait that found every `GET_LOCK` slot taken (a `TermWaiter` of the listener). */
export interface ParkedWaiter {
  readonly election: string;
  /** The term ended, or the lease is free: wake the Elector (once per term). */
  termEnded(term: number): void;
  /** The poll stopped (or started again) delivering: tell the Elector, which polls meanwhile. */
  deliveryChanged(): void;
}

/** What the poll needs from the listener that owns it. */
export interface ParkedPollHost {
  readonly executor: MysqlExecutor;
  readonly table: string;
  readonly queryTimeoutMs: number;
  isClosed(): boolean;
  /** The term to watch (null: nothing to wait for: nobody leads, or this backend leads). */
  termToWatch(election: string): number | null;
}

/**
 * The followers beyond `maxWatchConnections`, watched together: one read-only statement per
 * PARKED_POLL_BATCH elections every PARKED_POLL_MS, naming the elections whose term changed or
 * whose lease is free. A process that follows thousands of elections then sends a few statements
 * per interval, instead of each of its Electors campaigning every `retryMs`; its Electors look
 * themselves only at each lease's end (a crash). While a poll fails, `live` is false and the
 * Electors poll as without a wake-up.
 */
export class ParkedPoll {
  private readonly waiters = new Set<ParkedWaiter>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private failed = false;

  constructor(private readonly host: ParkedPollHost) {}

  /** Whether the parked waiters' elections are being looked at (false while the poll fails). */
  get live(): boolean {
    return !this.failed && !this.host.isClosed();
  }

  add(waiter: ParkedWaiter): void {
    this.waiters.add(waiter);
    this.arm();
  }

  delete(waiter: ParkedWaiter): void {
    this.waiters.delete(waiter);
    if (this.waiters.size === 0) this.disarm();
  }

  has(waiter: ParkedWaiter): boolean {
    return this.waiters.has(waiter);
  }

  /** The parked waiters, oldest first (a free slot goes to the first). */
  list(): ParkedWaiter[] {
    return [...this.waiters];
  }

  clear(): void {
    this.waiters.clear();
    this.disarm();
  }

  private arm(): void {
    if (this.timer !== null || this.host.isClosed()) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll().finally(() => {
        if (this.waiters.size > 0) this.arm();
      });
    }, PARKED_POLL_MS);
    this.timer.unref?.();
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.host.isClosed()) return;
    this.polling = true;
    try {
      const byElection = new Map<string, { term: number; waiters: ParkedWaiter[] }>();
      for (const w of this.waiters) {
        const term = this.host.termToWatch(w.election);
        if (term === null) continue;
        const entry = byElection.get(w.election);
        if (entry) entry.waiters.push(w);
        else byElection.set(w.election, { term, waiters: [w] });
      }
      const watched = [...byElection].map(([election, { term }]) => [election, term] as const);
      const changed: string[] = [];
      for (let i = 0; i < watched.length; i += PARKED_POLL_BATCH) {
        const [rows] = (await this.host.executor.run([changedTermsSql(this.host.table, watched.slice(i, i + PARKED_POLL_BATCH))])) as [
          Array<{ name: string }>,
        ];
        for (const row of rows) changed.push(String(row.name));
      }
      this.setFailed(false);
      for (const election of changed) {
        const entry = byElection.get(election);
        if (entry) for (const w of entry.waiters) if (this.waiters.has(w)) w.termEnded(entry.term);
      }
    } catch {
      this.setFailed(true);
    } finally {
      this.polling = false;
    }
  }

  private setFailed(failed: boolean): void {
    if (this.failed === failed) return;
    this.failed = failed;
    for (const w of this.waiters) w.deliveryChanged();
  }
}
