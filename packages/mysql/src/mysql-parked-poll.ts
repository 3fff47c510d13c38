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
  /** election → its parked waiters; a waiter is in at most one set. */
  private readonly byElection = new Map<string, Set<ParkedWaiter>>();
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private failed = false;

  constructor(private readonly host: ParkedPollHost) {}

  /** Whether the parked waiters' elections are being looked at (false while the poll fails). */
  get live(): boolean {
    return !this.failed && !this.host.isClosed();
  }

  add(waiter: ParkedWaiter): void {
    let set = this.byElection.get(waiter.election);
    if (!set) this.byElection.set(waiter.election, (set = new Set()));
    if (set.has(waiter)) return;
    set.add(waiter);
    this.count++;
    this.arm();
  }

  delete(waiter: ParkedWaiter): void {
    const set = this.byElection.get(waiter.election);
    if (!set?.delete(waiter)) return;
    this.count--;
    if (set.size === 0) this.byElection.delete(waiter.election);
    if (this.count === 0) this.disarm();
  }

  has(waiter: ParkedWaiter): boolean {
    return this.byElection.get(waiter.election)?.has(waiter) === true;
  }

  /** The parked waiters, elections parked first first (a free slot goes to the first). */
  list(): ParkedWaiter[] {
    const all: ParkedWaiter[] = [];
    for (const set of this.byElection.values()) for (const w of set) all.push(w);
    return all;
  }

  clear(): void {
    this.byElection.clear();
    this.count = 0;
    this.disarm();
  }

  private arm(): void {
    if (this.timer !== null || this.host.isClosed()) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll().finally(() => {
        if (this.count > 0) this.arm();
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
      const elections: string[] = [];
      const terms: number[] = [];
      for (const election of this.byElection.keys()) {
        const term = this.host.termToWatch(election);
        if (term === null) continue;
        elections.push(election);
        terms.push(term);
      }
      const changed: Array<[election: string, term: number]> = [];
      for (let i = 0; i < elections.length; i += PARKED_POLL_BATCH) {
        const chunk = elections.slice(i, i + PARKED_POLL_BATCH);
        const sql = changedTermsSql(this.host.table, chunk, terms.slice(i, i + PARKED_POLL_BATCH));
        const [rows] = (await this.host.executor.run([sql])) as [Array<{ name: string }>];
        if (rows.length === 0) continue;
        const termOf = new Map(chunk.map((election, k) => [election, terms[i + k] as number]));
        for (const row of rows) {
          const election = String(row.name);
          const term = termOf.get(election);
          if (term !== undefined) changed.push([election, term]);
        }
      }
      this.setFailed(false);
      for (const [election, term] of changed) {
        const set = this.byElection.get(election);
        if (set) for (const w of [...set]) w.termEnded(term);
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
    for (const w of this.list()) w.deliveryChanged();
  }
}
