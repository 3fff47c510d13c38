import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CandidateProcess, checkSplitBrain, waitFor } from '@conclave/test-harness';

// Candidate processes against the real Redis: the base of the fault tests and benchmarks.
const REDIS = 'redis://127.0.0.1:6379';

describe('candidate processes', () => {
  const started: CandidateProcess[] = [];
  afterEach(async () => {
    for (const c of started.splice(0)) c.kill('SIGKILL');
  });

  test('a SIGKILLed leader is replaced after its lease, with no overlap and no stale work', async () => {
    const election = `candidates-${randomBytes(3).toString('hex')}`;
    const config = (id: string) => ({ backend: REDIS, providers: ['@conclave/redis'], election, candidateId: id, leaseMs: 1500 });
    const a = await CandidateProcess.start(config('a'));
    started.push(a);
    await a.next((r) => r.type === 'work');
    const b = await CandidateProcess.start(config('b'));
    started.push(b);
    expect(b.leading).toBe(false);
    const takeover = b.next((r) => r.type === 'elected', 20_000);
    a.kill('SIGKILL');
    await takeover;
    await b.next((r) => r.type === 'work');
    await b.stop();
    const report = checkSplitBrain([...a.history(), ...b.history()]);
    expect(report.intervals.length).toBe(2);
    expect(report.overlaps).toEqual([]);
    expect(report.staleWork).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
  });

  test('a SIGKILLed leader\'s term covers all it reported, even work stamped after the parent\'s kill stamp', async () => {
    // A scripted child: it leads with token 7 and reports one unit of work stamped 2 s ahead,
    // as a child that was still running while the parent, descheduled, had already stamped its
    // kill. The term must reach that work: the kill ends a term no earlier than the last report.
    const dir = mkdtempSync(join(tmpdir(), 'conclave-scripted-'));
    try {
      const script = join(dir, 'child.js');
      writeFileSync(
        script,
        [
          "const now = () => Number(process.hrtime.bigint()) / 1e6;",
          "process.send({ type: 'ready', atMs: now(), pid: process.pid });",
          "process.send({ type: 'elected', atMs: now(), token: 7 });",
          "process.send({ type: 'lease', atMs: now(), token: 7, untilMs: now() + 60000 });",
          "process.send({ type: 'work', atMs: now() + 2000, token: 7 });",
          'setInterval(() => undefined, 1000);',
        ].join('\n'),
      );
      const config = { backend: REDIS, providers: [], election: 'scripted', candidateId: 'a', leaseMs: 1500 };
      const a = await CandidateProcess.start(config, 10_000, { script });
      started.push(a);
      await waitFor(() => a.reports.some((r) => r.type === 'work'), 'the scripted work report', 5_000);
      a.kill('SIGKILL');
      await a.waitForExit();
      const report = checkSplitBrain(a.history());
      expect(report.intervals.map((iv) => iv.token)).toEqual([7]);
      expect(report.workOutsideTerm).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
