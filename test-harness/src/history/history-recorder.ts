import type { Elector } from '@conclave/core';

/** One thing that happened to one candidate, on the system monotonic clock (shared by processes). */
export interface HistoryEvent {
  /** process.hrtime.bigint() in ms (fractional). */
  atMs: number;
  candidateId: string;
  /**
   * Which process (one Elector) the event came from, when candidate ids may repeat: two
   * processes started with the same candidate id are two candidates to the checker. When absent,
   * the candidate id stands for the process.
   */
  process?: string;
  kind: 'elected' | 'revoked' | 'work';
  token: number;
}

export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Records elections, revocations and units of work of many candidates, for the split-brain
 * checker. In one process it subscribes to Electors; across processes the candidates send their
 * events (same clock: process.hrtime.bigint()) and the harness calls `add`.
 */
export class HistoryRecorder {
  readonly events: HistoryEvent[] = [];
  private readonly unsubscribes: Array<() => void> = [];

  add(event: HistoryEvent): void {
    this.events.push(event);
  }

  /** Records every elected/revoked event of `elector` from now on. */
  attach(elector: Elector): void {
    const candidateId = elector.candidateId;
    const a = elector.elected$.subscribe((e) => this.add({ atMs: monotonicMs(), candidateId, kind: 'elected', token: e.token }));
    const b = elector.revoked$.subscribe((e) => this.add({ atMs: monotonicMs(), candidateId, kind: 'revoked', token: e.token }));
    this.unsubscribes.push(() => a.unsubscribe(), () => b.unsubscribe());
  }

  /**
   * Records one unit of work by `elector`, but only if `isLeader()` is true at that instant —
   * the way a user's code should guard its work. Returns whether the work was done.
   */
  work(elector: Elector): boolean {
    const token = elector.token;
    if (token === null || !elector.isLeader()) return false;
    this.add({ atMs: monotonicMs(), candidateId: elector.candidateId, kind: 'work', token });
    return true;
  }

  detach(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
  }
}
