import { createHash } from 'node:crypto';
import type { PoolClient, Notification } from 'pg';
import { withTimeout } from '@conclave/core/spi';
import { destroy, type PostgresExecutor } from './postgres-pool';

/** First wait before the listening connection is opened again after a loss, ms; doubles up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/**
 * The `NOTIFY` channel of a lease table: one per table, the payload is the election's name.
 * Hashed, because a channel is an identifier of at most 63 bytes and the table may be qualified.
 */
export function wakeChannel(table: string, schema: string | null): string {
  const digest = createHash('sha256').update(`${schema ?? ''}.${table}`).digest('hex').slice(0, 24);
  return `conclave_${digest}`;
}

/**
 * Wakes followers when a lease is released, forced or cleared: one connection of the pool per
 * backend holds `LISTEN` on the table's channel (PostgreSQL docs, "LISTEN", "NOTIFY") while
 * anybody watches, and hands each notification to the watchers of its election. A notification
 * sent while the connection is down is lost: the connection is opened again (with a growing
 * pause), every watcher is woken once it listens again, and meanwhile `isWatching` is false, so
 * the core polls; a lost hint costs at most the lease.
 */
export class PostgresWakeListener {
  /** By election: each watcher's entry and the candidate it wakes. */
  private readonly watchers = new Map<string, Map<() => void, string>>();
  private client: PoolClient | null = null;
  private connecting = false;
  private listening = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RECONNECT_MIN_MS;
  private closed = false;

  constructor(
    private readonly executor: PostgresExecutor,
    readonly channel: string,
    private readonly timeoutMs: number,
  ) {}

  /** Calls `onChange` on every notification for `election`; returns the function that stops it. */
  watch(election: string, candidateId: string, onChange: () => void): () => void {
    if (this.closed) return () => undefined;
    let set = this.watchers.get(election);
    if (!set) this.watchers.set(election, (set = new Map()));
    // One entry per call, even for the same function.
    const entry = () => onChange();
    set.set(entry, candidateId);
    this.ensureListening();
    return () => {
      const current = this.watchers.get(election);
      current?.delete(entry);
      if (current?.size === 0) this.watchers.delete(election);
    };
  }

  /** Whether a notification for `election` would reach this candidate's watcher now. */
  isWatching(election: string, candidateId: string): boolean {
    if (!this.listening || this.closed) return false;
    for (const candidate of this.watchers.get(election)?.values() ?? []) if (candidate === candidateId) return true;
    return false;
  }

  /** Ends the listening connection and every pending retry. Idempotent. */
  close(): void {
    this.closed = true;
    this.watchers.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.drop();
  }

  private ensureListening(): void {
    if (this.client || this.connecting || this.retryTimer || this.closed) return;
    this.connecting = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    let client: PoolClient | null = null;
    try {
      client = await this.executor.acquire();
      if (this.closed) {
        destroy(client);
        return;
      }
      this.client = client;
      const listened = client;
      const onLost = () => this.lost(listened);
      client.on('notification', this.onNotification);
      client.on('error', onLost);
      client.on('end', onLost);
      // Bounded like every statement: a frozen server must not keep the listener from retrying.
      await withTimeout(client.query(`LISTEN "${this.channel}"`), this.timeoutMs, () => new Error('LISTEN timed out'));
      if (this.client !== client) return;
      this.listening = true;
      this.retryMs = RECONNECT_MIN_MS;
      // Whatever was sent while nobody listened is lost: every watcher looks again.
      for (const set of [...this.watchers.values()]) for (const entry of [...set.keys()]) safely(entry);
    } catch {
      if (client && this.client === client) this.lost(client);
      else if (!this.client) this.scheduleRetry();
    } finally {
      this.connecting = false;
    }
  }

  private readonly onNotification = (message: Notification): void => {
    if (message.channel !== this.channel || message.payload === undefined) return;
    for (const entry of [...(this.watchers.get(message.payload)?.keys() ?? [])]) safely(entry);
  };

  private lost(client: PoolClient): void {
    if (this.client !== client) return;
    this.drop();
    this.scheduleRetry();
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    this.listening = false;
    if (!client) return;
    client.removeListener('notification', this.onNotification);
    // Its 'error' and 'end' listeners stay: they call `lost` for a client no longer current, which does nothing.
    destroy(client);
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.watchers.size > 0) this.ensureListening();
    }, wait);
    this.retryTimer.unref();
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // a watcher's failure is its own
  }
}
