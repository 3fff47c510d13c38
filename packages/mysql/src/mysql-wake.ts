import type { MysqlExecutor } from './mysql-pool';
import { WakeListener } from './mysql-wake-listener';
import { WakeSignal } from './mysql-wake-signal';

/**
 * The wake-up channel for fast hand-over. MySQL cannot push, but a session blocked in `GET_LOCK`
 * returns the moment the lock is released, and a lock held by a session is released when that
 * session ends. So:
 *
 * - A leader holds the named lock of its term (`lockName`) on one connection per backend
 *   (WakeSignal). `release()` frees the row first, then the lock.
 * - A follower that knows the current term blocks in `GET_LOCK` on that term's lock and wakes
 *   its Elector when it is granted (WakeListener).
 * - If a leader process dies, its session ends and the followers wake just the same; they find
 *   the lease still live on the server and the core retries when `leaseRemainingMs` says it ends.
 *
 * This class only passes what the backend learns to both sides. Everything here is a hint
 * (`changes.delivery: 'best-effort'`): a lost wake-up only means the core's poll finds the
 * change instead.
 */
export class MysqlWakeChannel {
  private readonly signal: WakeSignal;
  private readonly listener: WakeListener;

  constructor(executor: MysqlExecutor, table: string, maxConnections: number, queryTimeoutMs: number) {
    this.signal = new WakeSignal(executor, table, queryTimeoutMs);
    this.listener = new WakeListener(executor, table, maxConnections, queryTimeoutMs, (election) => this.signal.leads(election));
  }

  /** This backend leads `election` in `term` (after a campaign or renewal said so). */
  lead(election: string, term: number): void {
    this.listener.sawTerm(election, term);
    this.signal.lead(election, term);
  }

  /**
   * This backend does not lead `election`; `term` is the current term when known (null: nobody
   * leads). Resolves once the lock of a term we led is released, so a caller of `release()`
   * returns after the followers were woken.
   */
  follow(election: string, term: number | null | undefined): Promise<void> {
    if (term !== undefined) this.listener.sawTerm(election, term);
    // Before the waiters look again: they must see that we no longer lead.
    const released = this.signal.letGo(election);
    this.listener.lookAgain(election);
    return released;
  }

  isWatching(election: string, candidateId: string): boolean {
    return this.listener.isWatching(election, candidateId);
  }

  watch(election: string, candidateId: string, onChange: () => void): () => void {
    return this.listener.watch(election, candidateId, onChange);
  }

  async close(): Promise<void> {
    // The leader's in-flight statement is cut short first; ending its session frees every lock
    // it holds, which wakes the followers of our elections.
    const signalClosed = this.signal.close();
    await this.listener.close();
    await signalClosed;
  }
}
