/**
 * The Elector's public types: its roles, state snapshots, events, the lease a leader task
 * receives and its health report. Kept apart from the state machine so that code which only
 * needs the shapes (backends, helpers, tests) need not pull the Elector in.
 */

/**
 * An Elector's role: `stopped` (not started, or stopped), `follower` (campaigning, someone else
 * leads or nobody does yet), `leader`, or `paused` (started, not campaigning).
 */
export type Role = 'stopped' | 'follower' | 'leader' | 'paused';

/** Why leadership was given up. */
export type RevokeReason =
  /** `stepDown()` was called. */
  | 'stepped-down'
  /** `pause()` was called. */
  | 'paused'
  /** `stop()` was called. */
  | 'stopped'
  /** The lease ran out on this process's monotonic clock before a renewal was confirmed. */
  | 'lease-expired'
  /** The backend said another candidate holds the lease (taken over, forced or cleared). */
  | 'lease-lost';

/** A snapshot of an Elector's leadership: `elector.state`, and what `state$` emits. */
export interface LeadershipState {
  /** This Elector's role. */
  role: Role;
  /** Who leads, as far as this candidate can see; `null` when unknown or nobody. */
  leaderId: string | null;
  /** The fencing token of the term led by `leaderId`, when known. */
  token: number | null;
  /** Why the last change of role happened, when it was a loss of leadership. */
  reason?: RevokeReason;
}

/** Emitted by `elected$` when this candidate becomes leader. */
export interface ElectedEvent {
  /** The new term's fencing token. */
  token: number;
  /** Always `acquired`: the candidate took the lease. */
  reason: 'acquired';
}

/** Emitted by `revoked$` when a term of this candidate ends. */
export interface RevokedEvent {
  /** The token of the term that ended. */
  token: number;
  /** Why it ended. */
  reason: RevokeReason;
}

/** What a `whileLeader` task receives for one term. */
export interface LeaseContext {
  /** The fencing token of this term: pass it to the resources you guard. */
  token: number;
  /** Aborts when this term ends: step-down, stop, pause, lost lease, or lost contact before expiry. */
  signal: AbortSignal;
}

/**
 * A task given to `whileLeader`: called at the start of each term; it should return (or settle)
 * soon after `lease.signal` aborts.
 */
export type LeaderTask = (lease: LeaseContext) => Promise<void> | void;

/** What `health()` reports; `ok` is what a liveness probe should look at. */
export interface ElectorHealth {
  /** False when a leader is past its deadline, the backend refuses this Elector or has not answered for a lease; see `problem`. */
  ok: boolean;
  /** This Elector's role. */
  role: Role;
  /** Time left before the leader's deadline, ms; `null` when not leading. */
  leaseRemainingMs: number | null;
  /**
   * The lease the current term runs on, ms: `leaseMs`, or the shorter lease the backend granted
   * (ZooKeeper grants two thirds of its session, Redlock subtracts a drift allowance); `null`
   * when not leading. Work that must end before the lease can (a grace period) sizes itself on
   * this, not on `leaseMs`.
   */
  termLeaseMs: number | null;
  /** How often the current term is renewed, ms; `null` when not leading. */
  renewEveryMs: number | null;
  /** Backend calls that failed in a row. */
  consecutiveFailures: number;
  /** Why `ok` is false. */
  problem?: string;
}
