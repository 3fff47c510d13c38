import { randomBytes } from 'node:crypto';
import { CandidateProcess, checkSplitBrain } from '@conclave/test-harness';

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
});
