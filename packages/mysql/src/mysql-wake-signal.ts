import type { MysqlExecutor } from './mysql-pool';
import type { MysqlDedicatedConnection } from './mysql-pool-types';
import { bind, lockName } from './mysql-sql';

/**
 * Most locks one backend holds. Taking locks costs more the more one session holds (MariaDB 10.11:
 * 100 in one statement ≈ 15 ms, 1 000 ≈ 40 ms, 10 000 ≈ 750 ms, and the server's renewals wait
 * meanwhile); a backend follows at most `maxWatchConnections` elections by lock anyway. Elections
 * led beyond this have no lock: their followers find none and look at the lease's end instead.
 */
export const MAX_WAKE_LOCKS = 1000;

/**
 * The leader's side of the wake-up: holds the named lock of each term this backend leads, all on
 * one connection (one session can hold many locks). Letting a lock go, or the session ending, is
 * the signal: followers blocked in `GET_LOCK` on it return at once.
 *
 * Cost: one connection per backend that leads anything, and one statement per change of
 * leadership (one `SELECT GET_LOCK(…), RELEASE_LOCK(…)` for all the locks that changed together).
 */
export class WakeSignal {
  /** election → the term this backend leads and wants a lock for. */
  private readonly leading = new Map<string, number>();
  /** election → the term whose lock the holder connection has. */
  private readonly held = new Map<string, number>();
  private holder: MysqlDedicatedConnection | null = null;
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  private closed = false;
  private readonly closing = new AbortController();

  constructor(
    private readonly executor: MysqlExecutor,
    private readonly table: string,
    private readonly queryTimeoutMs: number,
  ) {}

  /** Whether this backend leads `election` (as far as the last campaign or renewal said). */
  leads(election: string): boolean {
    return this.leading.has(election);
  }

  /** This backend leads `election` in `term`: take that term's lock. */
  lead(election: string, term: number): void {
    if (this.leading.get(election) === term && this.held.get(election) === term) return;
    this.leading.set(election, term);
    void this.sync();
  }

  /**
   * This backend no longer leads `election`. Resolves once the lock of the term it led is
   * released, so that `release()` returns after the followers were woken.
   */
  letGo(election: string): Promise<void> {
    if (this.leading.delete(election) || this.held.has(election)) return this.sync();
    return Promise.resolve();
  }

  /** Stops taking locks and ends the session, which frees every lock it holds. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    await this.syncing?.catch(() => undefined);
    this.holder?.destroy();
    this.holder = null;
    this.held.clear();
  }

  /** Brings the held locks in line with `leading`, one statement for all changes; serialized. */
  private sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          await this.syncOnce();
        } while (this.syncAgain && !this.closed);
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.closed) return;
    const calls: string[] = [];
    const apply: Array<(value: unknown) => void> = [];
    for (const [election, term] of this.held) {
      if (this.leading.get(election) === term) continue;
      calls.push(bind('RELEASE_LOCK(?)', [lockName(this.table, election, term)]));
      apply.push(() => this.held.delete(election));
    }
    let room = MAX_WAKE_LOCKS - (this.held.size - calls.length);
    for (const [election, term] of this.leading) {
      if (this.held.get(election) === term) continue;
      if (room-- <= 0) break;
      // Timeout 0: a leader never waits. If a follower happens to hold the name (it was handed
      // the lock of a term that ended and is passing it on), the next renewal tries again.
      calls.push(bind('GET_LOCK(?, 0)', [lockName(this.table, election, term)]));
      apply.push((got) => {
        if (Number(got) === 1) this.held.set(election, term);
      });
    }
    if (calls.length === 0) return;
    try {
      if (!this.holder) this.holder = await this.executor.dedicated();
      const columns = calls.map((call, i) => `${call} AS c${i}`).join(', ');
      const rows = (await this.executor.query(
        this.holder,
        `SELECT ${columns}`,
        undefined,
        this.queryTimeoutMs,
        this.closing.signal,
      )) as Array<Record<string, unknown>>;
      apply.forEach((fn, i) => fn(rows[0]?.[`c${i}`]));
    } catch {
      // The session is gone (and with it every lock it held: followers have been woken). The
      // next lead() call, at the next renewal, takes the locks again on a new connection.
      this.holder?.destroy();
      this.holder = null;
      this.held.clear();
    }
  }
}
