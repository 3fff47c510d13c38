import type { HistoryEvent } from './history-recorder';

export interface LeadershipInterval {
  candidateId: string;
  token: number;
  startMs: number;
  /** Infinity while still leading at the end of the history. */
  endMs: number;
}

export interface SplitBrainReport {
  intervals: LeadershipInterval[];
  /** Pairs of intervals of different candidates that overlap in time. */
  overlaps: Array<[LeadershipInterval, LeadershipInterval]>;
  /** Terms whose token is not greater than the token of the term elected before them. */
  tokenRegressions: Array<[LeadershipInterval, LeadershipInterval]>;
  /** Work done by a candidate after another was elected with a higher token. */
  staleWork: HistoryEvent[];
  /** Work recorded outside any of that candidate's leadership intervals. */
  workOutsideTerm: HistoryEvent[];
}

/** Pairs each `elected` with the same candidate's next `revoked` of that token. */
export function leadershipIntervals(history: readonly HistoryEvent[]): LeadershipInterval[] {
  const sorted = [...history].sort((a, b) => a.atMs - b.atMs);
  const open = new Map<string, LeadershipInterval>();
  const done: LeadershipInterval[] = [];
  for (const e of sorted) {
    if (e.kind === 'elected') {
      const prev = open.get(e.candidateId);
      if (prev) done.push({ ...prev, endMs: e.atMs });
      open.set(e.candidateId, { candidateId: e.candidateId, token: e.token, startMs: e.atMs, endMs: Infinity });
    } else if (e.kind === 'revoked') {
      const cur = open.get(e.candidateId);
      if (cur && cur.token === e.token) {
        done.push({ ...cur, endMs: e.atMs });
        open.delete(e.candidateId);
      }
    }
  }
  return [...done, ...open.values()].sort((a, b) => a.startMs - b.startMs);
}

/**
 * The promise users buy, checked on a recorded history: no two candidates lead at once, tokens
 * grow with every term, and no candidate works after a newer leader was elected.
 */
export function checkSplitBrain(history: readonly HistoryEvent[]): SplitBrainReport {
  const intervals = leadershipIntervals(history);
  const overlaps: SplitBrainReport['overlaps'] = [];
  const tokenRegressions: SplitBrainReport['tokenRegressions'] = [];
  for (let i = 0; i < intervals.length; i++) {
    const a = intervals[i]!;
    for (let j = i + 1; j < intervals.length && intervals[j]!.startMs < a.endMs; j++) {
      if (intervals[j]!.candidateId !== a.candidateId) overlaps.push([a, intervals[j]!]);
    }
    if (i > 0 && a.token <= intervals[i - 1]!.token) tokenRegressions.push([intervals[i - 1]!, a]);
  }
  const staleWork: HistoryEvent[] = [];
  const workOutsideTerm: HistoryEvent[] = [];
  for (const w of history) {
    if (w.kind !== 'work') continue;
    const newer = intervals.find((iv) => iv.token > w.token && iv.startMs <= w.atMs);
    if (newer) staleWork.push(w);
    const own = intervals.find(
      (iv) => iv.candidateId === w.candidateId && iv.token === w.token && iv.startMs <= w.atMs && w.atMs <= iv.endMs,
    );
    if (!own) workOutsideTerm.push(w);
  }
  return { intervals, overlaps, tokenRegressions, staleWork, workOutsideTerm };
}

/** One line for logs and soak summaries. */
export function summarize(report: SplitBrainReport): string {
  return `terms: ${report.intervals.length}, overlaps: ${report.overlaps.length}, token regressions: ${report.tokenRegressions.length}, stale work: ${report.staleWork.length}`;
}
