import type { ConclaveError } from '@conclave/core';
import type { CampaignRequest, CampaignResult, LeaseRow, ReleaseRequest, RenewRequest, RenewResult } from '@conclave/core/spi';

/**
 * One SQL store's side of the lease row: how its server is asked, not what the answers mean.
 * `SqlLeaseBackend` does what is the same on every store (validation before any I/O, the schema
 * on first use, the batching of one turn's calls, admin revocation and what a revoked row means,
 * the leader's metadata, close); a dialect brings its SQL, its driver and its wake-up.
 *
 * The table holds one row per election: `name`, `holder` (an instance id, a forced candidate id,
 * a revocation tombstone — see `tombstoneHolder` in @conclave/core — or NULL when free), `term`
 * (the fencing token: +1 whenever the row changes hands, above `term_floor`), the lease's end on
 * the server's clock, the leader metadata and `written_by` (the server-identity fence). Rows are
 * never deleted, so a term is never handed out twice.
 *
 * Every call to the server goes through the `GuardedCalls` the dialect was made with, except
 * `createSchema`'s (the backend guards that one itself). Methods are called only with names and
 * ids already validated, and never before `createSchema` succeeded (when the backend creates
 * the schema).
 */
export interface LeaseRowDialect {
  /** The backend's kind (`mysql`), in errors and logs. */
  readonly kind: string;
  /** The store's name in messages (`MySQL`: "the MySQL backend is closed"). */
  readonly label: string;
  /** Most campaigns (and, apart, renewals) of one turn sent as one batch; a larger turn is split. */
  readonly maxBatch: number;
  /** The wake-up of followers when a lease ends early (release, force, clear), or null without one. */
  readonly wakeUp: LeaseWakeUp | null;

  /** A driver error as a `ConclaveError` (a `ConclaveError` is returned as it is). */
  toError(err: unknown, election?: string): ConclaveError;
  /** Whether `err` says the lease table does not exist (dropped behind our back): the backend creates it again. */
  isNoSuchTable(err: unknown): boolean;

  /** Creates the table if it does not exist and adds the columns an older table lacks. Idempotent, safe to run concurrently. */
  createSchema(election?: string): Promise<void>;
  /**
   * Acquire-or-join for every request (one turn's, at most `maxBatch`), in as few round trips as
   * the store allows; one result per request, in order. A free row is taken in a new term; a
   * live holder keeps its term and gets its lease extended; an instance adopts a lease forced to
   * its bare candidate id; a row another server wrote is fenced instead.
   */
  campaign(requests: CampaignRequest[]): Promise<CampaignResult[]>;
  /** Extends the leases whose holder and term are still the ones asked for and still live; one result per request, in order. */
  renew(requests: RenewRequest[]): Promise<RenewResult[]>;
  /**
   * Frees the lease if the request's instance holds it (with a token only that term; without one
   * but with `notAbove`, only a term no greater), and wakes the followers. A release whose
   * `signal` aborted before it was sent is not sent, and rejects.
   */
  release(request: ReleaseRequest): Promise<void>;
  /** Makes the next term's token greater than `floor`, the current term untouched; creates the row if missing. */
  raiseFloor(election: string, floor: number): Promise<void>;
  /**
   * The row of `election` while a candidate holds a live lease (no tombstone), with the leader
   * metadata: `holder, term, holder_value, transitions, since_ms, renewed_ms, ends_ms` (ms since
   * the epoch, NULL when not known); undefined otherwise.
   */
  leaderRow(election: string): Promise<Record<string, unknown> | undefined>;
  /** Whether `election` has a row (written by a campaign, force or raised floor). */
  hasRow(election: string): Promise<boolean>;
  /**
   * Admin revocation (first step of a force, or a clear): the live lease, unless `keepFor`
   * (a candidate id, bare or any instance of it) holds it, becomes a tombstone that keeps its
   * term and lives `graceMs` past the lease's end; a tombstone already there is made to live
   * that long past the lease it revoked. A row another server wrote is fenced first, for at
   * least `leaseMs`. Resolves with the row as it is afterwards (undefined: no row).
   */
  revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<LeaseRow | undefined>;
  /**
   * Admin force, second step: `candidateId` leads in a new term for `leaseMs`, only if the lease
   * is free or a tombstone whose revoked lease has ended on the server's clock. Resolves with the
   * new term, or null when nothing was installed (a candidate took the row meanwhile).
   */
  install(election: string, candidateId: string, leaseMs: number): Promise<number | null>;
  /** Closes the wake-up and the pool if the dialect created it (a pool passed in stays open). Idempotent. */
  close(): Promise<void>;
}

/** The followers' wake-up of a dialect: a hint, never a grant (`changes.delivery: 'best-effort'`). */
export interface LeaseWakeUp {
  /** Calls `onChange` when `election`'s lease may have ended early; returns the function that stops it. */
  watch(election: string, candidateId: string, onChange: () => void): () => void;
  /** Whether a wake-up for `election` would reach this candidate's watcher now. Synchronous, no I/O. */
  isWatching(election: string, candidateId: string): boolean;
}

/** What `SqlLeaseBackend` gives its dialect: the one way to call the server. */
export interface GuardedCalls {
  /**
   * Runs `call` unless the backend is closed (then rejects with `CLOSED`). A failure rejects as
   * the dialect's `toError` maps it, and a missing table makes the backend create the schema
   * again before its next call.
   */
  run<T>(election: string | undefined, call: () => Promise<T>): Promise<T>;
}
