import { createHash } from 'node:crypto';
import type { MysqlExecutor } from './mysql-pool';
import type { MysqlDedicatedConnection } from './mysql-pool-types';
import { bind, lockName } from './mysql-sql';

/** How long one follower's `GET_LOCK` blocks before it is sent again, s (one statement per this, per watched election). */
const WAIT_SECONDS = 20;
/** A follower that finds no leader lock yet retries after this, doubling up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 2_000;

interface Waiter {
  election: string;
  candidateId: string;
  onChange: () => void;
  active: boolean;
  running: boolean;
  /** A GET_LOCK is in flight on `connection`. */
  waiting: boolean;
  connection: MysqlDedicatedConnection | null;
  /** Holds one of the maxWatchConnections slots (its connection is open or being opened). */
  slot: boolean;
  /** The current term's lock was found unused more than twice: no wake-up will come from it. */
  lockMissing: boolean;
  /** Term whose release this waiter already reported; it never waits on that lock again. */
  doneTerm: number | null;
  /** Term for which a "no leader lock" answer was already reported as a possible change. */
  hintedTerm: number | null;
  misses: number;
  /** The term `misses` counts for; a new term starts the count again. */
  missTerm: number | null;
  abort: AbortController;
  /** Cuts a back-off sleep short when something changed. */
  nudge: (() => void) | null;
}

/**
 * The wake-up channel for fast hand-over. MySQL cannot push, but a session blocked in `GET_LOCK`
 * returns the moment the lock is released, and a lock held by a session is released when that
 * session ends. So:
 *
 * - A leader holds the named lock `conclave:<digest of table+election>:<term>` for its term, on
 *   one connection per backend (one session can hold many locks, so this is one connection for
 *   every election the process leads). `release()` frees the row first, then the lock.
 * - A follower that knows the current term blocks in `GET_LOCK` on that term's lock, on a
 *   connection of its own (a blocked session can wait on one lock only): one connection per
 *   watched election, at most `maxWatchConnections` per backend. Elections beyond that are
 *   polled by the core as if there were no push.
 * - MySQL grants a released lock to one waiter at a time. A follower that gets it releases it at
 *   once and wakes its Elector, which passes the lock to the next follower: the wake-up ripples
 *   through all followers at one statement each. The lock name carries the term, so a follower
 *   never waits on that lock again and the ripple ends.
 * - If a leader process dies, its session ends and the followers wake just the same; they find
 *   the lease still live on the server and the core retries when `leaseRemainingMs` says it ends.
 *
 * Cost per follower and watched election: one connection blocked in `GET_LOCK`, one statement per
 * change of term plus one every WAIT_SECONDS while nothing changes. Per leading process: one
 * connection and one statement per change of leadership (batched: one `SELECT GET_LOCK(…),
 * RELEASE_LOCK(…)` for all the locks that changed together).
 *
 * Everything here is a hint (`capabilities.push: 'best-effort'`): a lost wake-up only means the
 * core's poll finds the change instead.
 */
export class MysqlWakeChannel {
  private readonly waiters = new Set<Waiter>();
  /** election → its waiters (one per watching candidate of this backend). */
  private readonly byElection = new Map<string, Set<Waiter>>();
  /** Waiters that found every slot taken; the next free slot goes to one of them. */
  private readonly parked = new Set<Waiter>();
  /** election → the current term as this backend last saw it (null: nobody leads). */
  private readonly terms = new Map<string, number | null>();
  /** election → the term this backend leads and wants a lock for. */
  private readonly leading = new Map<string, number>();
  /** election → the term whose lock the holder connection has. */
  private readonly held = new Map<string, number>();
  private holder: MysqlDedicatedConnection | null = null;
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  private connections = 0;
  private readonly kills = new Set<Promise<void>>();
  private closed = false;
  private readonly closing = new AbortController();

  constructor(
    private readonly executor: MysqlExecutor,
    private readonly table: string,
    private readonly maxConnections: number,
    private readonly queryTimeoutMs: number,
  ) {}

  // ---- what the backend tells us --------------------------------------------------------

  /** This backend leads `election` in `term` (after a campaign or renewal said so). */
  lead(election: string, term: number): void {
    this.terms.set(election, term);
    if (this.leading.get(election) === term && this.held.get(election) === term) return;
    this.leading.set(election, term);
    void this.sync();
  }

  /**
   * This backend does not lead `election`; `term` is the current term when known (null: nobody
   * leads). Resolves once the lock of a term we led is released, so a caller of `release()`
   * returns after the followers were woken.
   */
  follow(election: string, term: number | null | undefined): Promise<void> {
    if (term !== undefined) this.terms.set(election, term);
    let released: Promise<void> = Promise.resolve();
    if (this.leading.delete(election) || this.held.has(election)) released = this.sync();
    const waiters = this.byElection.get(election);
    if (waiters) for (const w of waiters) this.kick(w);
    return released;
  }

  // ---- followers --------------------------------------------------------------------------

  /**
   * Whether the waiter of `candidateId` for `election` can deliver a wake-up now: it is live, holds
   * a slot (its connection is open or being opened, not parked beyond maxWatchConnections) and the
   * lock it waits on is one a leader holds. Synchronous, no I/O (ElectionBackend.isWatching).
   */
  isWatching(election: string, candidateId: string): boolean {
    if (this.closed) return false;
    const waiters = this.byElection.get(election);
    if (!waiters) return false;
    for (const w of waiters) {
      if (w.candidateId === candidateId && w.active && w.slot && !w.lockMissing) return true;
    }
    return false;
  }

  watch(election: string, candidateId: string, onChange: () => void): () => void {
    const waiter: Waiter = {
      election,
      candidateId,
      onChange,
      active: true,
      running: false,
      waiting: false,
      connection: null,
      slot: false,
      lockMissing: false,
      doneTerm: null,
      hintedTerm: null,
      misses: 0,
      missTerm: null,
      abort: new AbortController(),
      nudge: null,
    };
    this.waiters.add(waiter);
    let forElection = this.byElection.get(election);
    if (!forElection) this.byElection.set(election, (forElection = new Set()));
    forElection.add(waiter);
    this.kick(waiter);
    return () => {
      if (!waiter.active) return;
      waiter.active = false;
      this.waiters.delete(waiter);
      this.parked.delete(waiter);
      forElection.delete(waiter);
      if (forElection.size === 0 && this.byElection.get(election) === forElection) this.byElection.delete(election);
      waiter.abort.abort();
      waiter.nudge?.();
      void this.dropConnection(waiter);
      // A slot is free: a parked waiter may take it.
      this.unpark();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const drops: Array<Promise<void>> = [];
    for (const w of [...this.waiters]) {
      w.active = false;
      w.nudge?.();
      drops.push(this.dropConnection(w));
      w.abort.abort();
    }
    this.waiters.clear();
    this.byElection.clear();
    this.parked.clear();
    await Promise.all([...drops, ...this.kills]);
    await this.syncing?.catch(() => undefined);
    // Ending the session frees every lock it holds, which wakes the followers of our elections.
    this.holder?.destroy();
    this.holder = null;
    this.held.clear();
  }

  /** A slot is free: hand it to parked waiters, one after another until one takes it. */
  private unpark(): void {
    for (const w of [...this.parked]) {
      if (this.connections >= this.maxConnections) return;
      this.parked.delete(w);
      this.kick(w); // runs synchronously up to taking the slot, or parks again
    }
  }

  private kick(w: Waiter): void {
    if (!w.active || this.closed) return;
    if (w.running) {
      w.nudge?.();
      return;
    }
    void this.waitLoop(w);
  }

  private async waitLoop(w: Waiter): Promise<void> {
    w.running = true;
    try {
      while (w.active && !this.closed) {
        const term = this.terms.get(w.election);
        // Nothing to wait for: nobody leads (the core polls), we lead, or we already reported
        // the end of this term.
        if (term === undefined || term === null || this.leading.has(w.election) || term === w.doneTerm) return;
        if (!w.connection) {
          if (this.connections >= this.maxConnections) {
            this.parked.add(w); // until a slot frees up (unpark)
            return;
          }
          this.parked.delete(w);
          this.connections++;
          w.slot = true;
          try {
            w.connection = await this.executor.dedicated(w.election);
          } catch {
            this.connections--;
            w.slot = false;
            this.lostSlot(w);
            await this.sleep(w, this.backoff(w));
            continue;
          }
          if (!w.active) {
            void this.dropConnection(w);
            return;
          }
        }
        if (w.missTerm !== term) {
          w.missTerm = term;
          w.misses = 0;
          w.lockMissing = false;
        }
        const name = lockName(this.digest(w.election), term);
        let got: number | null;
        w.waiting = true;
        try {
          // IS_USED_LOCK first: a lock nobody holds would be granted at once and tell us nothing.
          const rows = (await this.executor.query(
            w.connection,
            bind(`SELECT IF(IS_USED_LOCK(?) IS NULL, -1, GET_LOCK(?, ${WAIT_SECONDS})) AS got`, [name, name]),
            w.election,
            WAIT_SECONDS * 1000 + this.queryTimeoutMs,
            w.abort.signal,
          )) as Array<{ got: unknown }>;
          got = rows[0]?.got === null || rows[0]?.got === undefined ? null : Number(rows[0].got);
          w.waiting = false;
        } catch {
          if (!w.active) return; // unwatch() or close() ended the wait and dropped the connection
          w.waiting = false;
          void this.dropConnection(w);
          if (!w.active) return;
          this.lostSlot(w);
          await this.sleep(w, this.backoff(w));
          continue;
        }
        if (!w.active) return;
        if (got === 1) {
          // The leader let go of this term (released, or its session ended). Pass the lock on at
          // once so the next follower wakes too, then wake our Elector.
          w.doneTerm = term;
          w.misses = 0;
          w.lockMissing = false;
          this.executor
            .query(w.connection, bind('SELECT RELEASE_LOCK(?)', [name]), w.election, this.queryTimeoutMs, w.abort.signal)
            .catch(() => void this.dropConnection(w));
          this.fire(w);
        } else if (got === -1) {
          // No session holds the term's lock: the new leader has not taken it yet, or the leader
          // is gone, or it runs without wake-up. Look again soon; after two misses, report a
          // possible change once (the core then campaigns and learns the truth).
          w.misses++;
          if (w.misses > 2) w.lockMissing = true; // isWatching: false, the core polls again
          if (w.misses > 2 && w.hintedTerm !== term) {
            w.hintedTerm = term;
            this.fire(w);
          }
          await this.sleep(w, Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(w.misses - 1, 10)));
        }
        // got === 0: GET_LOCK timed out, nothing changed; wait again.
        if (got === 0) w.lockMissing = false;
      }
    } finally {
      w.running = false;
    }
  }

  /**
   * The waiter's connection failed: it delivers nothing until it has a new one, so isWatching
   * turns false. Wake the Elector once so the core schedules its next look by polling (retryMs)
   * instead of waiting for the lease end on a push that cannot come.
   */
  private lostSlot(w: Waiter): void {
    if (!w.active) return;
    this.fire(w);
  }

  private fire(w: Waiter): void {
    setImmediate(() => {
      if (w.active) w.onChange();
    });
  }

  private sleep(w: Waiter, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        w.nudge = null;
        resolve();
      }
      w.nudge = done;
    });
  }

  private backoff(w: Waiter): number {
    w.misses++;
    return Math.min(MAX_RETRY_MS * 2, 100 * 2 ** Math.min(w.misses, 6));
  }

  /**
   * Destroys a waiter's connection. The server does not notice a client gone while its session
   * blocks in GET_LOCK, so a waiting session is ended with `KILL QUERY` (allowed on one's own
   * connections without extra privileges); otherwise it would linger until its timeout.
   */
  private dropConnection(w: Waiter): Promise<void> {
    const connection = w.connection;
    if (!connection) return Promise.resolve();
    w.connection = null;
    w.slot = false;
    this.connections--;
    if (w.active) queueMicrotask(() => this.unpark());
    connection.destroy();
    const id = connection.threadId;
    if (!w.waiting || typeof id !== 'number' || !Number.isSafeInteger(id)) return Promise.resolve();
    w.waiting = false;
    const kill = this.executor.run([`KILL QUERY ${id}`], w.election).then(
      () => undefined,
      () => undefined, // already finished (unknown thread), or the server is down: nothing lingers then
    );
    // close() waits for these, so the pool is not ended under them.
    this.kills.add(kill);
    void kill.finally(() => this.kills.delete(kill));
    return kill;
  }

  // ---- leaders ----------------------------------------------------------------------------

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
      calls.push(bind('RELEASE_LOCK(?)', [lockName(this.digest(election), term)]));
      apply.push(() => this.held.delete(election));
    }
    for (const [election, term] of this.leading) {
      if (this.held.get(election) === term) continue;
      // Timeout 0: a leader never waits. If a follower happens to hold the name (it was handed
      // the lock of a term that ended and is passing it on), the next renewal tries again.
      calls.push(bind('GET_LOCK(?, 0)', [lockName(this.digest(election), term)]));
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

  /** Lock names must be ≤ 64 characters; election names may be 128, so they are hashed (with the table). */
  private digest(election: string): string {
    return createHash('sha256').update(`${this.table}\0${election}`).digest('base64url').slice(0, 32);
  }
}
