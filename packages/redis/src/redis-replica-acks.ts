/**
 * What a write that gives or keeps leadership must wait for before it counts: its acknowledgement
 * by the master's replicas (`WAIT`, see `RedisBackendOptions.minReplicas`). A deposed master that
 * is still writable — Sentinel has promoted its replica and not yet turned it into one, or it is
 * cut off from Sentinel — then stops confirming its leader, since no replica follows it any more.
 */
export interface AckRequest {
  /** What the write is, for messages: `renewal`, `new term`, … */
  what: string;
  /** The lease the write is about, ms: the WAIT timeout is a fraction of it. */
  leaseMs: number;
  /** Whether this reply needs the acknowledgement (it granted or kept a lease); a refusal does not. */
  needed(reply: unknown): boolean;
}

/** How often `'auto'` looks again for replicas that joined the same master, ms. */
export const REPLICA_REREAD_MS = 1000;

/**
 * The WAIT timeout of a batch: a tenth of its shortest lease, so a renewal refused for want of a
 * replica still leaves the leader most of its lease; at most half of `commandTimeoutMs` (the
 * round trip's own bound) and never 0 (WAIT 0 blocks until enough replicas answer, however long).
 */
export function replicaAckTimeoutMs(leaseMs: number, commandTimeoutMs: number): number {
  return Math.max(1, Math.min(Math.floor(leaseMs / 10), Math.floor(commandTimeoutMs / 2)));
}

/** A field of an `INFO` reply (`run_id`), or null. */
export function infoField(info: unknown, field: string): string | null {
  if (typeof info !== 'string') return null;
  return new RegExp(`^${field}:(\\S+)`, 'm').exec(info)?.[1] ?? null;
}

/**
 * The replicas an `INFO replication` reply lists as `state=online`, or NaN when it is no such
 * reply. `connected_slaves` also counts replicas still waiting for or loading their first full
 * copy, which cannot acknowledge anything yet: counting them would refuse every write until the
 * copy is done (seconds, with the default `repl-diskless-sync-delay` of 5 s).
 */
export function onlineReplicas(info: unknown): number {
  if (typeof info !== 'string' || !/^connected_slaves:/m.test(info)) return NaN;
  return (info.match(/^slave\d+:.*\bstate=online\b/gm) ?? []).length;
}

/**
 * How many replicas must acknowledge, per connection. A fixed count, or `'auto'`: the replicas the
 * master had online when this backend reached it (`INFO replication`), read again on reaching
 * another master (its `run_id` differs: a failover), and raised, never lowered, while on the same
 * master — a master cut off from its replicas must not lower its own bar.
 */
export class ReplicaAcks {
  private runId: string | null = null;
  private bar = 0;
  private identified = false;
  private readAt = -Infinity;

  constructor(private readonly mode: number | 'auto') {}

  /** Replicas a write must reach now; 0 = send no WAIT. */
  required(): number {
    return this.mode === 'auto' ? this.bar : this.mode;
  }

  /** Says how the bar was set, for messages. */
  describe(): string {
    return this.mode === 'auto' ? `minReplicas 'auto': the replicas this master had online` : `minReplicas ${this.mode}`;
  }

  /** The connection was (re)made: it may lead to another master. */
  reconnected(): void {
    this.identified = false;
  }

  /** Whether the master must be identified (`INFO server`, `INFO replication`) before the next acknowledged write. */
  identityDue(): boolean {
    return this.mode === 'auto' && !this.identified;
  }

  /** From `INFO server` and `INFO replication` of the master now connected. */
  identify(server: unknown, replication: unknown): void {
    const runId = infoField(server, 'run_id');
    const connected = onlineReplicas(replication);
    this.identified = true;
    this.readAt = performance.now();
    if (!Number.isSafeInteger(connected)) return; // INFO refused: keep what is known
    if (runId === null || runId !== this.runId) this.bar = connected;
    else this.bar = Math.max(this.bar, connected);
    this.runId = runId;
  }

  /** Whether a batch should also carry `INFO replication`, to see replicas that joined since. */
  rereadDue(now: number): boolean {
    return this.mode === 'auto' && this.identified && now - this.readAt >= REPLICA_REREAD_MS;
  }

  /** From `INFO replication` read on the same connection: only raises the bar. */
  raise(replication: unknown): void {
    this.readAt = performance.now();
    const connected = onlineReplicas(replication);
    if (Number.isSafeInteger(connected) && connected > this.bar) this.bar = connected;
  }
}
