/**
 * The candidate processes the scenarios run: test-harness `CandidateProcess` (one Elector per
 * forked process, reporting on the shared monotonic clock) or a peer's, started, awaited and
 * disposed of the same way.
 */
import type { CandidateProcess, CandidateReport } from '@conclave/test-harness/tools';
import type { BenchTarget } from './servers';
import { bounded, trackChild, until } from './util';

let serial = 0;

/** What the scenarios need of a candidate process: conclave's (test-harness) or a peer's. */
export type BenchCandidate = Pick<
  CandidateProcess,
  'reports' | 'killedAtMs' | 'id' | 'child' | 'leading' | 'onReport' | 'kill' | 'freeze' | 'thaw' | 'waitForExit' | 'history'
>;

/** Starts a candidate on `url` (the server, or a proxy in front of it), killed on bench exit. */
export async function startCandidate(
  target: BenchTarget,
  url: string,
  election: string,
  workIntervalMs: number,
  leaseMs: number,
): Promise<BenchCandidate> {
  const candidateId = `bench-c${++serial}-${process.pid}`;
  const c = await target.startCandidate({ backend: url, election, candidateId, leaseMs, workIntervalMs });
  trackChild(c.child);
  return c;
}

/** Stops a candidate however it is (frozen, alive, dead), bounded. */
export async function dispose(c: BenchCandidate): Promise<void> {
  c.kill('SIGCONT');
  c.kill('SIGKILL');
  await bounded(c.waitForExit(), 10_000, `exit of ${c.id}`).catch(() => undefined);
}

export async function disposeAll(cs: readonly BenchCandidate[]): Promise<void> {
  await Promise.all(cs.map(dispose));
}

/** The first report matching `match` from any of `cs`, from now on. */
export function firstReport(
  cs: readonly BenchCandidate[],
  match: (r: CandidateReport) => boolean,
  timeoutMs: number,
  label: string,
): Promise<{ from: BenchCandidate; report: CandidateReport }> {
  return new Promise((resolve, reject) => {
    const offs: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      offs.forEach((off) => off());
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`timed out after ${timeoutMs} ms: ${label}`));
    }, timeoutMs);
    for (const c of cs) {
      offs.push(
        c.onReport((r) => {
          if (!match(r)) return;
          done();
          resolve({ from: c, report: r });
        }),
      );
    }
  });
}

/** Waits up to `ms` for one of `cs` to lead, and resolves with it. */
export const waitLeader = (cs: readonly BenchCandidate[], ms: number) =>
  until(() => cs.find((c) => c.leading), ms, 'a leader among the candidates');

/** `c`'s latest `elected` report. */
export const lastElected = (c: BenchCandidate) =>
  [...c.reports].reverse().find((r): r is Extract<CandidateReport, { type: 'elected' }> => r.type === 'elected');
