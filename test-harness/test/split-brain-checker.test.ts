import { describe, expect, test } from '@jest/globals';
import { checkRecovery, checkSplitBrain, type GuardWrite, type TermHistoryEvent } from '@conclave/test-harness';

// The checker fed known histories: one clean, and one known-bad history per property it checks,
// so a checker that silently stopped seeing a problem fails here rather than passing a soak.

type Kind = TermHistoryEvent['kind'];
const ev = (atMs: number, process: string, kind: Kind, token: number, extra: Partial<TermHistoryEvent> = {}): TermHistoryEvent => ({
  atMs,
  // Processes are named `<candidate id>@<pid>`, as CandidateProcess names them.
  candidateId: process.split('@')[0]!,
  process,
  kind,
  token,
  ...extra,
});
const write = (process: string, token: number, seq: number | null, atMs = seq ?? 0, doneAtMs = atMs + 1): GuardWrite => ({
  candidateId: process.split('@')[0]!,
  process,
  atMs,
  doneAtMs,
  token,
  accepted: seq !== null,
  seq,
});

/** a leads term 5 in [0, 1000], b leads term 6 from 1200; work and writes inside each term. */
const clean: TermHistoryEvent[] = [
  ev(0, 'a@1', 'elected', 5),
  ev(100, 'a@1', 'work', 5),
  ev(900, 'a@1', 'work', 5),
  ev(1000, 'a@1', 'revoked', 5),
  ev(1200, 'b@2', 'elected', 6),
  ev(1300, 'b@2', 'work', 6),
];
const cleanWrites = [write('a@1', 5, 1, 100), write('a@1', 5, 2, 500), write('b@2', 6, 3, 1300), write('a@1', 5, null, 990, 1400)];

describe('split-brain checker on known histories', () => {
  test('a clean history: nothing reported', () => {
    const r = checkSplitBrain(clean, { writes: cleanWrites });
    expect(r.intervals.map((iv) => [iv.process, iv.token, iv.startMs, iv.endMs])).toEqual([
      ['a@1', 5, 0, 1000],
      ['b@2', 6, 1200, Infinity],
    ]);
    expect({ overlaps: r.overlaps, regressions: r.tokenRegressions, stale: r.staleWork, outside: r.workOutsideTerm }).toEqual({
      overlaps: [],
      regressions: [],
      stale: [],
      outside: [],
    });
    // a's last write, sent inside its term and answered after b's, was rejected: fenced off, which is good.
    expect(r.guard).toMatchObject({ accepted: 3, rejected: 1, staleWrites: [], sharedTokens: [] });
  });

  test('overlap: b elected while a still leads', () => {
    const h = clean.map((e) => (e.process === 'a@1' && e.kind === 'revoked' ? { ...e, atMs: 1500 } : e));
    const r = checkSplitBrain(h);
    expect(r.overlaps.map(([x, y]) => [x.process, y.process])).toEqual([['a@1', 'b@2']]);
  });

  test('stale work: a works with its old token after b was elected with a newer one', () => {
    const r = checkSplitBrain([...clean, ev(1250, 'a@1', 'work', 5)]);
    expect(r.staleWork.map((w) => [w.process, w.atMs])).toEqual([['a@1', 1250]]);
    expect(r.workOutsideTerm.map((w) => w.atMs)).toEqual([1250]);
    // A guarded write sent at the same instant counts as stale work too.
    const withWrite = checkSplitBrain(clean, { writes: [...cleanWrites, write('a@1', 5, null, 1260)] });
    expect(withWrite.staleWork.map((w) => w.atMs)).toEqual([1260]);
  });

  test('token regression: a later term with a token not greater than the one before', () => {
    const h = [...clean, ev(2000, 'b@2', 'revoked', 6), ev(2100, 'c@3', 'elected', 6), ev(3000, 'c@3', 'revoked', 6), ev(3100, 'a@4', 'elected', 4)];
    const r = checkSplitBrain(h);
    expect(r.tokenRegressions.map(([x, y]) => [x.process, x.token, y.process, y.token])).toEqual([
      ['b@2', 6, 'c@3', 6],
      ['c@3', 6, 'a@4', 4],
    ]);
    expect(r.overlaps).toEqual([]);
  });

  test('stale write accepted: the resource accepted token 5 after token 6', () => {
    const r = checkSplitBrain(clean, { writes: [...cleanWrites, write('a@1', 5, 4, 1250)] });
    expect(r.guard!.staleWrites.map((w) => [w.process, w.token, w.seq])).toEqual([['a@1', 5, 4]]);
  });

  test('late recovery: no leader within the bound after a heal', () => {
    const r = checkSplitBrain(clean);
    const recovery = checkRecovery(
      r.intervals,
      [
        { atMs: 500, label: 'a leader at the heal', boundMs: 100 },
        { atMs: 1050, label: 'b in 150 ms', boundMs: 200 },
        { atMs: 1050, label: 'b too late', boundMs: 100 },
      ],
      2000,
    );
    expect(recovery.recoveries.map((x) => x.recoveredAfterMs)).toEqual([0, 150, 150]);
    expect(recovery.late.map((x) => x.label)).toEqual(['b too late']);
  });

  test('duplicate candidate id: two processes with one id leading at once are an overlap, and their shared token a shared term', () => {
    // Both processes were started as candidate "dup"; the second joined the first's term.
    const h = [
      ev(0, 'dup@10', 'elected', 7),
      ev(50, 'dup@11', 'elected', 7),
      ev(100, 'dup@10', 'work', 7),
      ev(120, 'dup@11', 'work', 7),
      ev(900, 'dup@10', 'revoked', 7),
      ev(950, 'dup@11', 'revoked', 7),
    ];
    const writes = [write('dup@10', 7, 1, 100), write('dup@11', 7, 2, 120)];
    const r = checkSplitBrain(h, { writes });
    expect(r.intervals.map((iv) => iv.process)).toEqual(['dup@10', 'dup@11']);
    expect(r.overlaps.map(([x, y]) => [x.process, y.process])).toEqual([['dup@10', 'dup@11']]);
    expect(r.tokenRegressions).toHaveLength(1); // one term elected twice
    expect(r.guard!.sharedTokens.map(([x, y]) => [x.process, y.process])).toEqual([['dup@10', 'dup@11']]);
    // Keyed by candidate id (no process), the same history would look like one leader.
    const byId = checkSplitBrain(h.map(({ process: _p, ...e }) => e));
    expect(byId.overlaps).toEqual([]);
  });

  test('duplicate candidate id, one after the other: not an overlap', () => {
    const h = [ev(0, 'dup@10', 'elected', 7), ev(900, 'dup@10', 'revoked', 7), ev(1000, 'dup@11', 'elected', 8), ev(1100, 'dup@11', 'work', 8)];
    const r = checkSplitBrain(h);
    expect({ overlaps: r.overlaps, regressions: r.tokenRegressions, stale: r.staleWork, outside: r.workOutsideTerm }).toEqual({
      overlaps: [],
      regressions: [],
      stale: [],
      outside: [],
    });
  });
});
