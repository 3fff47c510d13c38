import { describe, expect, test } from '@jest/globals';
import {
  checkGuardWrites,
  checkRecovery,
  checkSplitBrain,
  leadershipIntervals,
  type GuardWrite,
  type HistoryEvent,
  type TermHistoryEvent,
} from '@conclave/test-harness';

// The split-brain checker judges every fault run and soak; a checker that misses a violation
// makes them all pass. Each property gets a known-bad history that must be flagged, and the good
// histories beside them must pass clean.

const elected = (atMs: number, candidateId: string, token: number): TermHistoryEvent => ({ atMs, candidateId, kind: 'elected', token });
const revoked = (atMs: number, candidateId: string, token: number, leaseEndMs?: number): TermHistoryEvent =>
  leaseEndMs === undefined ? { atMs, candidateId, kind: 'revoked', token } : { atMs, candidateId, kind: 'revoked', token, leaseEndMs };
const work = (atMs: number, candidateId: string, token: number): HistoryEvent => ({ atMs, candidateId, kind: 'work', token });
const write = (atMs: number, candidateId: string, token: number, seq: number | null, accepted = seq !== null): GuardWrite => ({
  candidateId,
  atMs,
  doneAtMs: atMs + 2,
  token,
  accepted,
  seq,
});

/** Three clean terms, a → b → a, each with work inside it. */
const GOOD: TermHistoryEvent[] = [
  elected(0, 'a', 1),
  work(10, 'a', 1),
  work(90, 'a', 1),
  revoked(100, 'a', 1),
  elected(110, 'b', 2),
  work(150, 'b', 2),
  revoked(200, 'b', 2),
  elected(210, 'a', 3),
  work(220, 'a', 3),
  revoked(300, 'a', 3),
];

// a's write sent at 95, inside its term, reaches the resource after b's: fenced off, not stale work.
const GOOD_WRITES: GuardWrite[] = [write(10, 'a', 1, 1), write(150, 'b', 2, 2), write(95, 'a', 1, null, false), write(220, 'a', 3, 3)];

function expectClean(history: TermHistoryEvent[], writes?: GuardWrite[]): void {
  const report = checkSplitBrain(history, writes ? { writes } : {});
  expect(report.overlaps).toEqual([]);
  expect(report.tokenRegressions).toEqual([]);
  expect(report.staleWork).toEqual([]);
  expect(report.workOutsideTerm).toEqual([]);
  if (writes) {
    expect(report.guard!.staleWrites).toEqual([]);
    expect(report.guard!.sharedTokens).toEqual([]);
  }
}

describe('good histories pass', () => {
  test('clean hand-overs with work inside each term', () => {
    expectClean(GOOD);
    expect(leadershipIntervals(GOOD).map((iv) => [iv.candidateId, iv.token, iv.startMs, iv.endMs])).toEqual([
      ['a', 1, 0, 100],
      ['b', 2, 110, 200],
      ['a', 3, 210, 300],
    ]);
  });

  test('guarded writes, with a deposed leader fenced off', () => {
    expectClean(GOOD, GOOD_WRITES);
    const guard = checkSplitBrain(GOOD, { writes: GOOD_WRITES }).guard!;
    expect([guard.accepted, guard.rejected, guard.failed]).toEqual([3, 1, 0]);
  });

  test('a frozen leader whose revocation arrives late ends at its lease end', () => {
    // a was frozen at 100; its lease ended at 150; b led from 160; a reported revoked at 400.
    expectClean([elected(0, 'a', 1), revoked(400, 'a', 1, 150), elected(160, 'b', 2), revoked(300, 'b', 2)]);
  });

  test('a leader still leading at the end of the history', () => {
    expectClean([elected(0, 'a', 1), revoked(100, 'a', 1), elected(110, 'b', 2), work(500, 'b', 2)]);
  });

  test('recovery within its bound', () => {
    const report = checkRecovery(leadershipIntervals(GOOD), [{ atMs: 105, label: 'heal', boundMs: 50 }], 300);
    expect(report.late).toEqual([]);
    expect(report.recoveries[0]!.recoveredAfterMs).toBe(5);
  });
});

describe('known-bad histories are flagged', () => {
  test('overlap: b elected while a still leads', () => {
    const report = checkSplitBrain([elected(0, 'a', 1), elected(50, 'b', 2), revoked(100, 'a', 1), revoked(200, 'b', 2)]);
    expect(report.overlaps).toHaveLength(1);
    expect(report.overlaps[0]!.map((iv) => iv.candidateId)).toEqual(['a', 'b']);
  });

  test('overlap: a late revocation whose lease end is after the next election', () => {
    const report = checkSplitBrain([elected(0, 'a', 1), revoked(400, 'a', 1, 170), elected(160, 'b', 2), revoked(300, 'b', 2)]);
    expect(report.overlaps).toHaveLength(1);
  });

  test('token regression: a later term with a smaller or equal token', () => {
    const smaller = checkSplitBrain([elected(0, 'a', 5), revoked(100, 'a', 5), elected(110, 'b', 4), revoked(200, 'b', 4)]);
    expect(smaller.tokenRegressions).toHaveLength(1);
    expect(smaller.tokenRegressions[0]!.map((iv) => iv.token)).toEqual([5, 4]);
    const equal = checkSplitBrain([elected(0, 'a', 5), revoked(100, 'a', 5), elected(110, 'b', 5), revoked(200, 'b', 5)]);
    expect(equal.tokenRegressions).toHaveLength(1);
    // Nothing else is wrong with these histories: only the token check can catch them.
    expect([smaller.overlaps, smaller.staleWork, smaller.workOutsideTerm]).toEqual([[], [], []]);
  });

  test('stale work: a deposed leader works after a newer term began', () => {
    const history = [...GOOD, work(120, 'a', 1)];
    const report = checkSplitBrain(history);
    expect(report.staleWork).toEqual([work(120, 'a', 1)]);
    expect(report.workOutsideTerm).toEqual([work(120, 'a', 1)]);
  });

  test('stale work: a guarded write sent with an old token after a newer term began', () => {
    const report = checkSplitBrain(GOOD, { writes: [...GOOD_WRITES, write(230, 'b', 2, null, false)] });
    expect(report.staleWork.map((w) => [w.candidateId, w.token, w.atMs])).toEqual([['b', 2, 230]]);
  });

  test('work outside any term of the candidate', () => {
    const report = checkSplitBrain([...GOOD, work(105, 'a', 1)]);
    expect(report.workOutsideTerm).toEqual([work(105, 'a', 1)]);
    expect(report.staleWork).toEqual([]);
  });

  test('stale write accepted: the resource took token 1 after token 2', () => {
    const guard = checkGuardWrites([write(10, 'a', 1, 1), write(150, 'b', 2, 2), write(160, 'a', 1, 3)]);
    expect(guard.staleWrites.map((w) => w.seq)).toEqual([3]);
    const report = checkSplitBrain(GOOD, { writes: [write(10, 'a', 1, 1), write(150, 'b', 2, 2), write(160, 'a', 1, 3)] });
    expect(report.guard!.staleWrites).toHaveLength(1);
  });

  test('stale write accepted: two candidates wrote with the same token', () => {
    const guard = checkGuardWrites([write(10, 'a', 1, 1), write(20, 'b', 1, 2)]);
    expect(guard.sharedTokens).toHaveLength(1);
    expect(guard.sharedTokens[0]!.map((w) => w.candidateId)).toEqual(['a', 'b']);
  });

  test('late recovery: no leader within the bound after a heal', () => {
    const intervals = leadershipIntervals(GOOD);
    const late = checkRecovery(intervals, [{ atMs: 105, label: 'heal', boundMs: 4 }], 300);
    expect(late.late.map((r) => [r.label, r.recoveredAfterMs])).toEqual([['heal', 5]]);
    const never = checkRecovery(intervals, [{ atMs: 305, label: 'never', boundMs: 1000 }], 400);
    expect(never.late.map((r) => [r.label, r.recoveredAfterMs])).toEqual([['never', null]]);
  });

  test('late recovery behind a term whose end went unreported: counted by work, not by the open interval', () => {
    // a leads and works until 50, then its revocation is lost; nobody acts after that.
    const history: TermHistoryEvent[] = [elected(0, 'a', 1), work(10, 'a', 1), work(50, 'a', 1)];
    const intervals = leadershipIntervals(history);
    expect(intervals[0]!.endMs).toBe(Infinity);
    const heal = [{ atMs: 100, label: 'heal', boundMs: 20 }];
    // The open interval alone covers the heal...
    expect(checkRecovery(intervals, heal, 300).late).toEqual([]);
    // ...work shows nobody led after it.
    expect(checkRecovery(intervals, heal, 300, history).late.map((r) => [r.label, r.recoveredAfterMs])).toEqual([['heal', null]]);
    const recovered = [...history, elected(110, 'b', 2), work(112, 'b', 2)];
    expect(checkRecovery(leadershipIntervals(recovered), heal, 300, recovered).late).toEqual([]);
  });
});
