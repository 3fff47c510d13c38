import type { HistoryEvent } from './history-recorder';

/**
 * A history event that may know when its term's lease ran out. On a `revoked` event,
 * `leaseEndMs` is the latest instant (same clock as `atMs`) at which the candidate's `isLeader()`
 * could still be true in that term; the term ends at `min(atMs, leaseEndMs)`. A process frozen by
 * SIGSTOP reports its revocation when it wakes, but it stopped leading when its lease ran out.
 */
export interface TermHistoryEvent extends HistoryEvent {
  leaseEndMs?: number;
}

export interface LeadershipInterval {
  candidateId: string;
  /** The process that led (see `HistoryEvent.process`); the candidate id when the history has none. */
  process: string;
  token: number;
  startMs: number;
  /** Infinity while still leading at the end of the history. */
  endMs: number;
}

/** One write to a guarded resource, as a candidate reported it. */
export interface GuardWrite {
  candidateId: string;
  /** The process that wrote (see `HistoryEvent.process`). */
  process?: string;
  /** When it was sent (right after a true `isLeader()`), monotonic ms. */
  atMs: number;
  /** When the answer came back. */
  doneAtMs: number;
  token: number;
  accepted: boolean;
  /** The resource's own order of accepted writes; null when rejected or failed. */
  seq: number | null;
  /** Set when the write got no verdict (timeout, connection error). */
  error?: string;
}

export interface GuardReport {
  accepted: number;
  /** Turned away because a greater token had been accepted: a deposed leader fenced off (good). */
  rejected: number;
  /** No verdict (the resource did not answer). */
  failed: number;
  /** Accepted with a token lower than one accepted before it (in the resource's order). Must be empty. */
  staleWrites: GuardWrite[];
  /**
   * Accepted writes of two different processes with the same token: two leaders shared a term
   * (two processes with one candidate id count as two). Must be empty.
   */
  sharedTokens: Array<[GuardWrite, GuardWrite]>;
}

export interface SplitBrainReport {
  intervals: LeadershipInterval[];
  /** Pairs of intervals of different processes that overlap in time (one candidate id or not). */
  overlaps: Array<[LeadershipInterval, LeadershipInterval]>;
  /** Terms whose token is not greater than the token of the term elected before them. */
  tokenRegressions: Array<[LeadershipInterval, LeadershipInterval]>;
  /** Work (and guarded writes) done by a candidate after another was elected with a higher token. */
  staleWork: HistoryEvent[];
  /** Work recorded outside any of that candidate's leadership intervals. */
  workOutsideTerm: HistoryEvent[];
  /** Present when guarded writes were passed to the checker. */
  guard?: GuardReport;
}

export interface SplitBrainOptions {
  /** Writes to a guarded resource: checked for stale acceptance, and as units of work. */
  writes?: readonly GuardWrite[];
}

/** The key the checker tells leaders apart by: the process, else the candidate id. */
export function processOf(e: { candidateId: string; process?: string }): string {
  return e.process ?? e.candidateId;
}

/**
 * Pairs each `elected` with the same process's next `revoked` of that token. A revocation's
 * `leaseEndMs`, when known and earlier, ends the term instead (see `TermHistoryEvent`).
 */
export function leadershipIntervals(history: readonly TermHistoryEvent[]): LeadershipInterval[] {
  const sorted = [...history].sort((a, b) => a.atMs - b.atMs);
  const open = new Map<string, LeadershipInterval>();
  const done: LeadershipInterval[] = [];
  for (const e of sorted) {
    const who = processOf(e);
    if (e.kind === 'elected') {
      const prev = open.get(who);
      if (prev) done.push({ ...prev, endMs: e.atMs });
      open.set(who, { candidateId: e.candidateId, process: who, token: e.token, startMs: e.atMs, endMs: Infinity });
    } else if (e.kind === 'revoked') {
      const cur = open.get(who);
      if (cur && cur.token === e.token) {
        const end = e.leaseEndMs === undefined ? e.atMs : Math.max(cur.startMs, Math.min(e.atMs, e.leaseEndMs));
        done.push({ ...cur, endMs: end });
        open.delete(who);
      }
    }
  }
  return [...done, ...open.values()].sort((a, b) => a.startMs - b.startMs);
}

/** Checks the guarded resource's verdicts: nothing stale accepted, no term shared by two candidates. */
export function checkGuardWrites(writes: readonly GuardWrite[]): GuardReport {
  const accepted = writes.filter((w) => w.accepted && w.seq !== null).sort((a, b) => a.seq! - b.seq!);
  const staleWrites: GuardWrite[] = [];
  const sharedTokens: Array<[GuardWrite, GuardWrite]> = [];
  let max = -Infinity;
  const firstByToken = new Map<number, GuardWrite>();
  const reportedPairs = new Set<string>();
  for (const w of accepted) {
    if (w.token < max) staleWrites.push(w);
    max = Math.max(max, w.token);
    const first = firstByToken.get(w.token);
    if (!first) firstByToken.set(w.token, w);
    else if (processOf(first) !== processOf(w)) {
      const key = `${w.token}|${processOf(w)}`;
      if (!reportedPairs.has(key)) {
        reportedPairs.add(key);
        sharedTokens.push([first, w]);
      }
    }
  }
  return {
    accepted: writes.filter((w) => w.accepted).length,
    rejected: writes.filter((w) => !w.accepted && w.error === undefined).length,
    failed: writes.filter((w) => w.error !== undefined).length,
    staleWrites,
    sharedTokens,
  };
}

/**
 * The promise users buy, checked on a recorded history: no two candidates lead at once, tokens
 * grow with every term, no candidate works after a newer leader was elected, and (with `writes`)
 * the guarded resource never accepted a stale token.
 */
export function checkSplitBrain(history: readonly TermHistoryEvent[], options: SplitBrainOptions = {}): SplitBrainReport {
  const intervals = leadershipIntervals(history);
  const overlaps: SplitBrainReport['overlaps'] = [];
  const tokenRegressions: SplitBrainReport['tokenRegressions'] = [];
  for (let i = 0; i < intervals.length; i++) {
    const a = intervals[i]!;
    for (let j = i + 1; j < intervals.length && intervals[j]!.startMs < a.endMs; j++) {
      if (intervals[j]!.process !== a.process) overlaps.push([a, intervals[j]!]);
    }
    if (i > 0 && a.token <= intervals[i - 1]!.token) tokenRegressions.push([intervals[i - 1]!, a]);
  }
  // Elections in time order, with the highest token elected so far at each point.
  const elections = intervals.map((iv) => ({ atMs: iv.startMs, token: iv.token }));
  const maxTokenBefore = (atMs: number): number => {
    // Binary search for the last election at or before atMs; prefix maxima.
    let lo = 0;
    let hi = elections.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (elections[mid]!.atMs <= atMs) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? -Infinity : prefixMax[found]!;
  };
  const prefixMax: number[] = [];
  for (let i = 0; i < elections.length; i++) prefixMax.push(Math.max(prefixMax[i - 1] ?? -Infinity, elections[i]!.token));

  const byProcess = new Map<string, LeadershipInterval[]>();
  for (const iv of intervals) {
    const list = byProcess.get(iv.process) ?? [];
    list.push(iv);
    byProcess.set(iv.process, list);
  }
  const staleWork: HistoryEvent[] = [];
  const workOutsideTerm: HistoryEvent[] = [];
  const units: HistoryEvent[] = history.filter((e) => e.kind === 'work');
  for (const w of options.writes ?? []) {
    units.push({ atMs: w.atMs, candidateId: w.candidateId, ...(w.process === undefined ? {} : { process: w.process }), kind: 'work', token: w.token });
  }
  for (const w of units) {
    if (maxTokenBefore(w.atMs) > w.token) staleWork.push(w);
    const own = (byProcess.get(processOf(w)) ?? []).find(
      (iv) => iv.token === w.token && iv.startMs <= w.atMs && w.atMs <= iv.endMs,
    );
    if (!own) workOutsideTerm.push(w);
  }
  const report: SplitBrainReport = { intervals, overlaps, tokenRegressions, staleWork, workOutsideTerm };
  if (options.writes) report.guard = checkGuardWrites(options.writes);
  return report;
}

/** A fault healed at `atMs`; a leader should exist again within `boundMs`. */
export interface HealPoint {
  atMs: number;
  label: string;
  boundMs: number;
}

export interface RecoveryReport {
  /** Per heal: time until some candidate led again (ms), or null if none did within the history. */
  recoveries: Array<HealPoint & { recoveredAfterMs: number | null }>;
  /** Heals after which no leader appeared within their bound. */
  late: Array<HealPoint & { recoveredAfterMs: number | null }>;
  maxRecoveryMs: number;
}

/**
 * Liveness after faults: for each heal point, how long until some candidate led (0 when one was
 * leading at that instant). `historyEndMs` bounds the search (the end of the run).
 *
 * With `work` (the history's `work` events), a leader counts only once it acts: recovery is the
 * first unit of work at or after the heal. Intervals alone can hide a stalled election: a term
 * whose end went unreported stays open to the end of the history and would cover every later heal.
 */
export function checkRecovery(
  intervals: readonly LeadershipInterval[],
  heals: readonly HealPoint[],
  historyEndMs: number,
  work?: readonly TermHistoryEvent[],
): RecoveryReport {
  const workTimes = (work ?? []).filter((e) => e.kind === 'work').map((e) => e.atMs).sort((a, b) => a - b);
  const recoveries = heals.map((h) => {
    let best: number | null = null;
    if (workTimes.length > 0) {
      const first = workTimes.find((t) => t >= h.atMs && t <= historyEndMs);
      return { ...h, recoveredAfterMs: first === undefined ? null : first - h.atMs };
    }
    for (const iv of intervals) {
      if (iv.endMs <= h.atMs) continue;
      const t = Math.max(0, iv.startMs - h.atMs);
      if (iv.startMs > historyEndMs) continue;
      if (best === null || t < best) best = t;
    }
    return { ...h, recoveredAfterMs: best };
  });
  const late = recoveries.filter((r) => r.recoveredAfterMs === null || r.recoveredAfterMs > r.boundMs);
  const maxRecoveryMs = recoveries.reduce((m, r) => Math.max(m, r.recoveredAfterMs ?? 0), 0);
  return { recoveries, late, maxRecoveryMs };
}

/** One line for logs and soak summaries. */
export function summarize(report: SplitBrainReport): string {
  const base = `terms: ${report.intervals.length}, overlaps: ${report.overlaps.length}, token regressions: ${report.tokenRegressions.length}, stale work: ${report.staleWork.length}`;
  if (!report.guard) return base;
  const g = report.guard;
  return `${base}, writes accepted: ${g.accepted}, rejected: ${g.rejected}, failed: ${g.failed}, stale writes: ${g.staleWrites.length + g.sharedTokens.length}`;
}
