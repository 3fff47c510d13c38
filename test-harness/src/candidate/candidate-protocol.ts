import type { GuardConfig } from '../guard/guard-config';

/**
 * The modules a candidate loads its backend providers from when its config names none: core's
 * (the memory backend). The harness names no backend: a backend's kit lists its own
 * (`BackendKit.providerModules`), which fault clusters and the bench pass on.
 */
export const DEFAULT_PROVIDER_MODULES: readonly string[] = ['@conclave/core'];

/** What a candidate process is told to do, as JSON in its CONCLAVE_CANDIDATE environment variable. */
export interface CandidateConfig {
  /** Backend URL (`redis://…`, `memory:…`, …), built by core's `createBackend` with `providers`. */
  backend: string;
  /**
   * The modules whose backend providers build `backend`: package names or paths (relative ones
   * from the working directory), loaded in the child. Every export that is a `BackendProvider`, or
   * an array of them, is used. Default `DEFAULT_PROVIDER_MODULES`.
   */
  providers?: string[];
  election: string;
  candidateId: string;
  leaseMs: number;
  renewMs?: number;
  retryMs?: number;
  /** A unit of work is attempted this often, ms; done only while `isLeader()`. Default 10. 0 = no work. */
  workIntervalMs?: number;
  /**
   * Optional guarded resource: while `isLeader()`, the candidate writes its fencing token to it
   * (one write in flight at a time) and reports each outcome as a `write` report.
   */
  guard?: GuardConfig;
  /**
   * Report a `lease` message each time the backend grants or extends a lease (the latest instant,
   * on the shared monotonic clock, at which this candidate's `isLeader()` can still be true).
   * Default true. The split-brain checker uses it to end a term when the lease ran out while the
   * process was frozen, rather than when the frozen process got round to reporting it.
   */
  reportLeases?: boolean;
}

/** Messages from the parent to a candidate (over the IPC channel). */
export type CandidateCommand = { type: 'stop' } | { type: 'stepDown' } | { type: 'pause' } | { type: 'resume' };

/** Messages from a candidate to the parent. `atMs` is process.hrtime.bigint() in ms: one clock for all processes. */
export type CandidateReport =
  /** `instanceId`: what the Elector campaigns under, when it exposes one (candidate id and nonce). */
  | { type: 'ready'; atMs: number; pid: number; instanceId?: string }
  | { type: 'elected'; atMs: number; token: number }
  | { type: 'revoked'; atMs: number; token: number; reason: string }
  | { type: 'leader'; atMs: number; leaderId: string | null }
  | { type: 'work'; atMs: number; token: number }
  /**
   * The backend granted (campaign) or extended (renew) the lease of term `token`: `isLeader()`
   * cannot be true after `untilMs`. An upper bound: measured from a send instant taken after
   * the Elector's own, with the Elector's safety margin.
   */
  | { type: 'lease'; atMs: number; token: number; untilMs: number }
  /**
   * One write to the guarded resource: sent at `atMs` with `token` (read together with a true
   * `isLeader()`), answered at `doneAtMs`. `accepted` is the resource's verdict; `seq` its order
   * among accepted writes (null when rejected); `error` when the write failed (no verdict).
   */
  | { type: 'write'; atMs: number; doneAtMs: number; token: number; accepted: boolean; seq: number | null; error?: string }
  /** A warning or error the Elector logged (repeats within a second left out). */
  | { type: 'log'; atMs: number; level: 'warn' | 'error'; message: string; /** The `ConclaveError` code of the error logged, if any. */ code?: string }
  | { type: 'stopped'; atMs: number }
  | { type: 'error'; atMs: number; message: string };
