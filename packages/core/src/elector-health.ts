import type { TermState } from './elector-machine';
import type { ElectorHealth, Role } from './elector-types';

/** What `health()` judges from: a plain snapshot of one Elector at `nowMs`. */
export interface HealthSnapshot {
  nowMs: number;
  role: Role;
  term: TermState | null;
  candidateId: string;
  leaseMs: number;
  /** Failed calls since the last one that succeeded, and when that was. */
  failures: number;
  /** The error of the last failed call (while `failures` > 0): named in the problem. */
  lastFailure?: unknown;
  lastContactAt: number;
  /** Whether a call has succeeded since start(). */
  answered: boolean;
  /** The refusal the last call failed with, if it was one. */
  refusal: Error | null;
  /** Another instance with our candidate id that leads, if one does. */
  duplicateLeader: string | null;
}

/**
 * For liveness probes (like client-go's HealthzAdaptor): not ok when the Elector believes it
 * leads past its deadline (its timers are starved: the event loop is stuck), while another
 * instance with its candidate id leads, when the backend refuses it, when the backend has not
 * answered since start() (a campaigning Elector has no election to stand on until it has), or when
 * the backend has not answered for longer than a lease.
 */
export function judgeHealth(s: HealthSnapshot): ElectorHealth {
  const { nowMs: now, role, term } = s;
  const base = {
    role,
    // Whole ms, rounded down: never more time than is left.
    leaseRemainingMs: role === 'leader' && term ? Math.max(0, Math.floor(term.deadline - now)) : null,
    termLeaseMs: role === 'leader' && term ? term.leaseMs : null,
    renewEveryMs: role === 'leader' && term ? term.renewEveryMs : null,
    consecutiveFailures: s.failures,
  };
  if (role === 'leader' && term && now >= term.deadline) {
    return { ...base, ok: false, problem: 'leader past its lease deadline without renewing' };
  }
  if (s.duplicateLeader !== null && role === 'follower') {
    return {
      ...base,
      ok: false,
      problem: `duplicate candidate id: another Elector with candidate id ${JSON.stringify(s.candidateId)} leads`,
    };
  }
  if (s.refusal !== null) {
    return { ...base, ok: false, problem: s.refusal.message };
  }
  if (role === 'follower' && !s.answered) {
    const failed = s.failures > 0 ? `; ${s.failures} failed ${s.failures === 1 ? 'call' : 'calls'}${lastError(s)}` : '';
    return { ...base, ok: false, problem: `the backend has not answered since start()${failed}` };
  }
  if ((role === 'leader' || role === 'follower') && s.failures > 0 && now - s.lastContactAt > s.leaseMs) {
    return { ...base, ok: false, problem: `backend unreachable for more than a lease (${s.failures} failed calls${lastError(s)})` };
  }
  return { ...base, ok: true };
}

/** `; last error: …` when the last failed call had one (a replica shortfall, a timeout). */
function lastError(s: HealthSnapshot): string {
  const err = s.lastFailure;
  if (err === null || err === undefined) return '';
  return `; last error: ${err instanceof Error ? err.message : String(err)}`;
}
