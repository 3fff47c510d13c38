/**
 * What the pieces that run one Elector share (elector.ts wires them together): `ElectorSetup`,
 * settled by the constructor and never changed, and `Standing`, one record mutated in place so
 * that every piece reads the others' latest changes.
 */
import type { ElectionBackend } from './backend';
import type { ResolvedElectorOptions } from './elector-options';
import type { Role } from './elector-types';
import type { Logger } from './logger';

/** The fields every log line of an Elector carries. */
export interface LogContext {
  election: string;
  candidate: string;
  backend: string;
}

/** What the constructor settles: names, backend, options, logger. */
export interface ElectorSetup {
  readonly election: string;
  readonly candidateId: string;
  /** What leases are held under (see instance-id.ts). */
  readonly instanceId: string;
  readonly backend: ElectionBackend;
  readonly options: Readonly<ResolvedElectorOptions>;
  readonly log: Logger;
  /** A fresh `LogContext` object for each line. */
  context(): LogContext;
}

/** One term as its leader keeps it. */
export interface Term {
  token: number;
  /** Renewal interval for this term: renewMs, or less when the backend grants a shorter lease. */
  renewEveryMs: number;
  /** The lease this term runs on: leaseMs, or what the backend granted when that is shorter. */
  leaseMs: number;
  /** performance.now() after which this candidate must not act as leader. */
  deadline: number;
  /** Aborted when the term ends: the `signal` of its LeaseContext. */
  controller: AbortController;
}

/** Where the Elector stands now. */
export interface Standing {
  role: Role;
  /** Bumped whenever the role changes, so answers to calls sent before the change are ignored. */
  epoch: number;
  /** The term led, while `role` is `leader`. */
  term: Term | null;
  /** Highest token this Elector has led with; a later term must have a greater one. */
  lastToken: number | null;
  /** performance.now() before which `stepDown()` keeps this Elector from campaigning again. */
  holdOffUntil: number;
  /**
   * A term given up on purpose (stop, stepDown, pause) whose work is awaited and whose lease is
   * released now: no campaign until it is done (a campaign would find the lease still ours).
   */
  handover: Promise<void> | null;
}

export function newStanding(): Standing {
  return { role: 'stopped', epoch: 0, term: null, lastToken: null, holdOffUntil: 0, handover: null };
}
