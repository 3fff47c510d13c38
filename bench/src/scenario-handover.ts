/** Graceful hand-over and crash take-over: how long until another candidate leads. */
import type { BenchTarget } from './servers';
import { dispose, disposeAll, firstReport, startCandidate, waitLeader, type BenchCandidate } from './scenario-candidates';
import { electionName, type BenchSettings } from './scenario-settings';
import { nowMs, sleep, summarize, type Summary } from './util';

export interface HandoverResult {
  rounds: number;
  /** ms from the signal to another candidate's `elected`. */
  latencyMs: Summary;
  samples: number[];
  failures: string[];
  /**
   * Crash only: per round, the lease the killed leader still had on the server at the kill (its
   * last confirmed renewal's send instant + the lease granted − the kill instant), and the
   * take-over time beyond it. Rounds whose leader reported no lease are left out.
   */
  leaseLeftMs?: Summary;
  overheadMs?: Summary;
  leaseLeftSamples?: number[];
  overheadSamples?: number[];
}

/**
 * The server-side end of `c`'s lease as of `atMs`: the latest `lease` report stamped by then.
 * Conclave candidates report the end their Elector trusts (safety margin taken off): `marginMs`
 * adds it back.
 */
function leaseEndAt(c: BenchCandidate, atMs: number, marginMs: number): number | null {
  let end: number | null = null;
  for (const r of c.reports) if (r.type === 'lease' && r.atMs <= atMs) end = Math.max(end ?? -Infinity, r.untilMs + marginMs);
  return end;
}

/**
 * Rounds of: 3 live candidates, settle, signal the leader (SIGTERM: it stops and releases;
 * SIGKILL: a crash), time until another candidate reports `elected`. A fresh candidate replaces
 * the one signalled, so every round has the same number of followers.
 */
export async function handover(
  target: BenchTarget,
  signal: 'SIGTERM' | 'SIGKILL',
  rounds: number,
  s: BenchSettings,
): Promise<HandoverResult> {
  const election = electionName(signal === 'SIGTERM' ? 'graceful' : 'crash');
  const url = target.url();
  let cs: BenchCandidate[] = [];
  const samples: number[] = [];
  const failures: string[] = [];
  const leaseLeft: number[] = [];
  const overhead: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      try {
        const missing = s.candidates - cs.length;
        cs.push(...(await Promise.all(Array.from({ length: missing }, () => startCandidate(target, url, election, 0, s.leaseMs)))));
        const leader = await waitLeader(cs, s.leaseMs * 4);
        // Let the followers settle into their steady state (watch registered, poll timers set).
        await sleep(signal === 'SIGTERM' ? 400 : 600);
        if (!leader.leading) throw new Error('leader changed while settling');
        const others = cs.filter((c) => c !== leader);
        const next = firstReport(others, (rep) => rep.type === 'elected', s.leaseMs * 5, 'next leader');
        const t0 = nowMs();
        leader.kill(signal);
        const { report } = await next;
        const dt = report.atMs - t0;
        samples.push(dt);
        const end = signal === 'SIGKILL' ? leaseEndAt(leader, t0, target.leaseMarginMs) : null;
        if (end !== null) {
          leaseLeft.push(end - t0);
          overhead.push(dt - (end - t0));
        }
        s.log(
          `    round ${r + 1}/${rounds}: ${dt.toFixed(1)} ms` +
            (end !== null ? ` (lease left at the kill ${(end - t0).toFixed(1)} ms, overhead ${(dt - (end - t0)).toFixed(1)} ms)` : ''),
        );
        cs = others;
        await dispose(leader);
      } catch (err) {
        failures.push(`round ${r + 1}: ${(err as Error).message}`);
        s.log(`    round ${r + 1}/${rounds}: FAILED ${(err as Error).message}`);
        await disposeAll(cs);
        cs = [];
      }
    }
  } finally {
    await disposeAll(cs);
  }
  const crash =
    signal === 'SIGKILL'
      ? { leaseLeftMs: summarize(leaseLeft), overheadMs: summarize(overhead), leaseLeftSamples: leaseLeft, overheadSamples: overhead }
      : {};
  return { rounds, latencyMs: summarize(samples), samples, failures, ...crash };
}
