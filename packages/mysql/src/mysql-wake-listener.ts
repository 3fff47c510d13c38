import type { MysqlExecutor } from './mysql-pool';
import type { MysqlDedicatedConnection } from './mysql-pool-types';
import { ParkedPoll, type ParkedWaiter } from './mysql-parked-poll';
import { bind, lockName } from './mysql-sql';

/** How long one follower's `GET_LOCK` blocks before it is sent again, s (one statement per this, per watched election). */
const WAIT_SECONDS = 20;
/** A follower that finds no leader lock yet retries after this, doubling up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 20;
const MAX_RETRY_MS = 2_000;

/**
 * The followers' side of the wake-up. A follower that knows the current term blocks in
 * `GET_LOCK` on that term's lock, on a connection of its own (a blocked session can wait on one
 * lock only): one connection per watched election, at most `maxConnections` per backend.
 * Elections beyond that are parked: one `ParkedPoll` looks at all of them together.
 *
 * MySQL grants a released lock to one waiter at a time. A follower that gets it releases it at
 * once and wakes its Elector, which passes the lock to the next follower: the wake-up ripples
 * through all followers at one statement each. The lock name carries the term, so a follower
 * never waits on that lock again and the ripple ends.
 *
 * Cost per watched election: one connection blocked in `GET_LOCK`, one statement per change of
 * term plus one every WAIT_SECONDS while nothing changes; per parked one, a share of the
 * parked poll's statement.
 */
export class WakeListener {
  private readonly waiters = new Set<TermWaiter>();
  /** election → its waiters (one per watching candidate of this backend). */
  private readonly byElection = new Map<string, Set<TermWaiter>>();
  /** election → the current term as this backend last saw it (null: nobody leads). */
  private readonly terms = new Map<string, number | null>();
  private readonly slots: Slots;
  private readonly kills = new Set<Promise<void>>();
  private readonly host: WaiterHost;
  private closed = false;

  constructor(
    executor: MysqlExecutor,
    table: string,
    maxConnections: number,
    queryTimeoutMs: number,
    /** Whether this backend leads an election: its own followers then have nothing to wait for. */
    leads: (election: string) => boolean,
  ) {
    const termToWatch = (election: string): number | null => {
      const term = this.terms.get(election);
      return term === undefined || term === null || leads(election) ? null : term;
    };
    const parked = new ParkedPoll({ executor, table, queryTimeoutMs, isClosed: () => this.closed, termToWatch });
    this.slots = new Slots(maxConnections, parked);
    this.host = {
      executor,
      table,
      queryTimeoutMs,
      slots: this.slots,
      isClosed: () => this.closed,
      termToWatch,
      track: (kill) => {
        this.kills.add(kill);
        void kill.finally(() => this.kills.delete(kill));
      },
    };
  }

  /** The current term of `election`, as a campaign, renewal or release just showed it. */
  sawTerm(election: string, term: number | null): void {
    this.terms.set(election, term);
  }

  /** Something changed for `election`: its waiters look again at once. */
  lookAgain(election: string): void {
    const waiters = this.byElection.get(election);
    if (waiters) for (const w of waiters) w.kick();
  }

  /**
   * Whether the waiter of `candidateId` for `election` can deliver a wake-up now: it is live, and
   * either holds a slot (its connection is open or being opened) and waits on a lock a leader
   * holds, or is parked beyond maxConnections while the parked poll works and there is a term to
   * watch. Synchronous, no I/O (ElectionBackend.isWatching).
   */
  isWatching(election: string, candidateId: string): boolean {
    if (this.closed) return false;
    const waiters = this.byElection.get(election);
    if (!waiters) return false;
    for (const w of waiters) {
      if (w.candidateId === candidateId && w.canWake) return true;
    }
    return false;
  }

  watch(election: string, candidateId: string, onChange: () => void): () => void {
    const waiter = new TermWaiter(election, candidateId, onChange, this.host);
    this.waiters.add(waiter);
    let forElection = this.byElection.get(election);
    if (!forElection) this.byElection.set(election, (forElection = new Set()));
    forElection.add(waiter);
    waiter.kick();
    return () => {
      if (waiter.stopped) return;
      void waiter.stop();
      this.waiters.delete(waiter);
      this.slots.forget(waiter);
      forElection.delete(waiter);
      if (forElection.size === 0 && this.byElection.get(election) === forElection) this.byElection.delete(election);
      // A slot is free: a parked waiter may take it.
      this.slots.unpark();
    };
  }

  /** Ends every wait; resolves once their sessions are killed, so the pool is not ended under them. */
  async close(): Promise<void> {
    this.closed = true;
    const stops = [...this.waiters].map((w) => w.stop());
    this.waiters.clear();
    this.byElection.clear();
    this.slots.clear();
    await Promise.all([...stops, ...this.kills]);
  }
}

/** What a waiter needs from the listener that owns it. */
interface WaiterHost {
  readonly executor: MysqlExecutor;
  readonly table: string;
  readonly queryTimeoutMs: number;
  readonly slots: Slots;
  isClosed(): boolean;
  /** The term whose lock to wait on; null when nobody leads (the core polls) or this backend leads. */
  termToWatch(election: string): number | null;
  /** A `KILL QUERY` in flight, which close() waits for. */
  track(kill: Promise<void>): void;
}

/** The maxConnections slots: a waiter holds one while its connection is open or being opened. */
class Slots {
  private taken = 0;

  /** `parked`: the waiters that found every slot taken; the next free slot goes to one of them. */
  constructor(
    private readonly max: number,
    private readonly parked: ParkedPoll,
  ) {}

  /** Takes a slot for `w`, or parks it until one frees up (false). */
  take(w: TermWaiter): boolean {
    if (this.taken >= this.max) {
      if (!this.parked.has(w)) this.parked.add(w);
      return false;
    }
    this.parked.delete(w);
    this.taken++;
    return true;
  }

  giveBack(): void {
    this.taken--;
  }

  forget(w: TermWaiter): void {
    this.parked.delete(w);
  }

  /** Whether `w` is parked and its election looked at by the parked poll. */
  watchedParked(w: TermWaiter): boolean {
    return this.parked.live && this.parked.has(w);
  }

  /** A slot is free: hand it to parked waiters, one after another until one takes it. */
  unpark(): void {
    for (const w of this.parked.list()) {
      if (this.taken >= this.max) return;
      this.parked.delete(w);
      (w as TermWaiter).kick(); // runs synchronously up to taking the slot, or parks again
    }
  }

  clear(): void {
    this.parked.clear();
  }
}

/** One candidate's wait for the end of the current term of one election. */
class TermWaiter implements ParkedWaiter {
  private active = true;
  private running = false;
  /** A GET_LOCK is in flight on `connection`. */
  private waiting = false;
  private connection: MysqlDedicatedConnection | null = null;
  /** Holds one of the slots (its connection is open or being opened). */
  private slot = false;
  /** The current term's lock was found unused more than twice: no wake-up will come from it. */
  private lockMissing = false;
  /** Term whose release this waiter already reported; it never waits on that lock again. */
  private doneTerm: number | null = null;
  /** Term for which a "no leader lock" answer was already reported as a possible change. */
  private hintedTerm: number | null = null;
  private misses = 0;
  /** The term `misses` counts for; a new term starts the count again. */
  private missTerm: number | null = null;
  /** Ends the waiter's queries on stop(); made on first use (most waiters of a big process stay parked). */
  private abortController: AbortController | null = null;
  /** Cuts a back-off sleep short when something changed. */
  private nudge: (() => void) | null = null;

  constructor(
    readonly election: string,
    readonly candidateId: string,
    private readonly onChange: () => void,
    private readonly host: WaiterHost,
  ) {}

  get stopped(): boolean {
    return !this.active;
  }

  /** Live, and holding a slot and waiting on a lock a leader holds, or parked with a term to watch. */
  get canWake(): boolean {
    if (!this.active) return false;
    if (this.slot) return !this.lockMissing;
    return this.host.slots.watchedParked(this) && this.host.termToWatch(this.election) !== null;
  }

  /** The parked poll found the term ended or the lease free: wake the Elector, once per term. */
  termEnded(term: number): void {
    if (!this.active || term === this.doneTerm) return;
    this.doneTerm = term;
    this.fire();
  }

  /** The parked poll failed: the Elector polls until it works again (see `lostSlot`). */
  deliveryChanged(): void {
    if (!this.host.slots.watchedParked(this)) this.fire();
  }

  private get signal(): AbortSignal {
    this.abortController ??= new AbortController();
    if (!this.active) this.abortController.abort();
    return this.abortController.signal;
  }

  /** Look again now: start the wait, or cut a back-off sleep short. */
  kick(): void {
    if (!this.active || this.host.isClosed()) return;
    if (this.running) {
      this.nudge?.();
      return;
    }
    void this.waitLoop();
  }

  /** Ends the wait for good; resolves once a blocked session is killed. */
  stop(): Promise<void> {
    this.active = false;
    this.abortController?.abort();
    this.nudge?.();
    return this.dropConnection();
  }

  private async waitLoop(): Promise<void> {
    this.running = true;
    try {
      while (this.active && !this.host.isClosed()) {
        const term = this.host.termToWatch(this.election);
        // Nothing to wait for, or we already reported the end of this term.
        if (term === null || term === this.doneTerm) return;
        if (!this.connection) {
          if (!this.host.slots.take(this)) return; // parked until a slot frees up
          this.slot = true;
          try {
            this.connection = await this.host.executor.dedicated(this.election);
          } catch {
            this.host.slots.giveBack();
            this.slot = false;
            this.lostSlot();
            await this.sleep(this.backoff());
            continue;
          }
          if (!this.active) {
            void this.dropConnection();
            return;
          }
        }
        if (this.missTerm !== term) {
          this.missTerm = term;
          this.misses = 0;
          this.lockMissing = false;
        }
        const got = await this.waitForRelease(this.connection, term);
        if (got === undefined) {
          // The connection failed (or stop() ended the wait and dropped it).
          if (!this.active) return;
          void this.dropConnection();
          if (!this.active) return;
          this.lostSlot();
          await this.sleep(this.backoff());
          continue;
        }
        if (!this.active) return;
        if (got === 1) {
          // The leader let go of this term (released, or its session ended). Pass the lock on at
          // once so the next follower wakes too, then wake our Elector.
          this.doneTerm = term;
          this.misses = 0;
          this.lockMissing = false;
          this.host.executor
            .query(
              this.connection,
              bind('SELECT RELEASE_LOCK(?)', [lockName(this.host.table, this.election, term)]),
              this.election,
              this.host.queryTimeoutMs,
              this.signal,
            )
            .catch(() => void this.dropConnection());
          this.fire();
        } else if (got === -1) {
          // No session holds the term's lock: the new leader has not taken it yet, or the leader
          // is gone, or it runs without wake-up. Look again soon; after two misses, report a
          // possible change once (the core then campaigns and learns the truth).
          this.misses++;
          if (this.misses > 2) this.lockMissing = true; // isWatching: false, the core polls again
          if (this.misses > 2 && this.hintedTerm !== term) {
            this.hintedTerm = term;
            this.fire();
          }
          await this.sleep(Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(this.misses - 1, 10)));
        }
        // got === 0: GET_LOCK timed out, nothing changed; wait again.
        if (got === 0) this.lockMissing = false;
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Blocks in `GET_LOCK` on the term's lock. 1: granted (the leader let go); 0: timed out;
   * -1: nobody holds it; null: the server said NULL; undefined: the query failed.
   */
  private async waitForRelease(connection: MysqlDedicatedConnection, term: number): Promise<number | null | undefined> {
    const name = lockName(this.host.table, this.election, term);
    this.waiting = true;
    try {
      // IS_USED_LOCK first: a lock nobody holds would be granted at once and tell us nothing.
      const rows = (await this.host.executor.query(
        connection,
        bind(`SELECT IF(IS_USED_LOCK(?) IS NULL, -1, GET_LOCK(?, ${WAIT_SECONDS})) AS got`, [name, name]),
        this.election,
        WAIT_SECONDS * 1000 + this.host.queryTimeoutMs,
        this.signal,
      )) as Array<{ got: unknown }>;
      return rows[0]?.got === null || rows[0]?.got === undefined ? null : Number(rows[0].got);
    } catch {
      return undefined;
    } finally {
      this.waiting = false;
    }
  }

  /**
   * The connection failed: the waiter delivers nothing until it has a new one, so isWatching
   * turns false. Wake the Elector once so the core schedules its next look by polling (retryMs)
   * instead of waiting for the lease end on a push that cannot come.
   */
  private lostSlot(): void {
    if (!this.active) return;
    this.fire();
  }

  private fire(): void {
    setImmediate(() => {
      if (this.active) this.onChange();
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.nudge = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.nudge = done;
    });
  }

  private backoff(): number {
    this.misses++;
    return Math.min(MAX_RETRY_MS * 2, 100 * 2 ** Math.min(this.misses, 6));
  }

  /**
   * Destroys the connection. The server does not notice a client gone while its session blocks
   * in GET_LOCK, so a waiting session is ended with `KILL QUERY` (allowed on one's own
   * connections without extra privileges); otherwise it would linger until its timeout.
   */
  private dropConnection(): Promise<void> {
    const connection = this.connection;
    if (!connection) return Promise.resolve();
    this.connection = null;
    this.slot = false;
    this.host.slots.giveBack();
    if (this.active) queueMicrotask(() => this.host.slots.unpark());
    connection.destroy();
    const id = connection.threadId;
    if (!this.waiting || typeof id !== 'number' || !Number.isSafeInteger(id)) return Promise.resolve();
    this.waiting = false;
    const kill = this.host.executor.run([`KILL QUERY ${id}`], this.election).then(
      () => undefined,
      () => undefined, // already finished (unknown thread), or the server is down: nothing lingers then
    );
    this.host.track(kill);
    return kill;
  }
}
