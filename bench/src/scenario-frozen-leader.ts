/** A leader frozen past its lease, then woken: what work it does with its old token. */
import { checkSplitBrain, type CandidateReport } from '@conclave/test-harness/tools';
import type { BenchTarget } from './servers';
import { disposeAll, lastElected, startCandidate, waitLeader, type BenchCandidate } from './scenario-candidates';
import { electionName, type BenchSettings } from './scenario-settings';
import { nowMs, round, sleep } from './util';

export interface FrozenRound {
  oldToken: number;
  /** Highest token elected while the old leader was frozen (null: nobody took over). */
  newToken: number | null;
  /** Work units by the woken leader, stamped after SIGCONT. */
  workAfterWake: number;
  /** Of those, with a token below the newest elected one (stale): target 0. */
  staleWorkAfterWake: number;
  /** Of the stale ones, how many the simulated guard rejected. */
  guardRejected: number;
  /** The guard would reject the old leader's token (old < new). */
  tokenWouldBeRejected: boolean;
  /** ms from SIGCONT to the woken process reporting `revoked` (its isLeader() is already false before). */
  revokedReportAfterWakeMs: number | null;
  revokeReason: string | null;
  /** From the split-brain checker, over the whole round. */
  splitBrainOverlaps: number;
  staleWorkAll: number;
}

export interface FrozenResult {
  rounds: FrozenRound[];
  freezeMs: number;
  failures: string[];
}

/**
 * 3 candidates doing a unit of work every 10 ms while `isLeader()`. SIGSTOP the leader for
 * 1.5 × lease (another is elected meanwhile), SIGCONT, watch it for a second. A guarded
 * resource is simulated here: it accepts a token only if no higher token was seen.
 */
export async function frozenLeader(target: BenchTarget, rounds: number, s: BenchSettings): Promise<FrozenResult> {
  const election = electionName('frozen');
  const url = target.url();
  const freezeMs = Math.round(1.5 * s.leaseMs);
  const out: FrozenRound[] = [];
  const failures: string[] = [];
  let cs: BenchCandidate[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      try {
        const missing = s.candidates - cs.length;
        cs.push(...(await Promise.all(Array.from({ length: missing }, () => startCandidate(target, url, election, 10, s.leaseMs)))));
        const leader = await waitLeader(cs, s.leaseMs * 4);
        await sleep(500);
        const oldToken = lastElected(leader)!.token;
        const others = cs.filter((c) => c !== leader);
        const roundStart = nowMs() - 1000;
        leader.freeze();
        await sleep(freezeMs);
        const wakeAt = nowMs();
        leader.thaw();
        await sleep(1000);
        const electedMeanwhile = others
          .flatMap((c) => c.reports)
          .filter((rep): rep is Extract<CandidateReport, { type: 'elected' }> => rep.type === 'elected' && rep.atMs < wakeAt && rep.atMs > roundStart);
        const newToken = electedMeanwhile.length ? Math.max(...electedMeanwhile.map((e) => e.token)) : null;
        const after = leader.reports.filter((rep) => rep.atMs >= wakeAt);
        const work = after.filter((rep): rep is Extract<CandidateReport, { type: 'work' }> => rep.type === 'work');
        // The guard: every work unit of every candidate, in time order; reject tokens below the highest seen.
        const all = cs
          .flatMap((c) => c.reports.map((rep) => ({ c, rep })))
          .filter((x) => x.rep.type === 'work' && x.rep.atMs > roundStart)
          .sort((a, b) => a.rep.atMs - b.rep.atMs);
        let highest = -Infinity;
        let rejected = 0;
        let stale = 0;
        for (const { c, rep } of all) {
          const token = (rep as Extract<CandidateReport, { type: 'work' }>).token;
          const isWokenStale = c === leader && rep.atMs >= wakeAt && newToken !== null && token < newToken;
          if (isWokenStale) stale++;
          if (token < highest) {
            if (isWokenStale) rejected++;
          } else highest = token;
        }
        const revoked = after.find((rep) => rep.type === 'revoked') as Extract<CandidateReport, { type: 'revoked' }> | undefined;
        const report = checkSplitBrain(cs.flatMap((c) => c.history()).filter((e) => e.atMs > roundStart));
        const round1: FrozenRound = {
          oldToken,
          newToken,
          workAfterWake: work.length,
          staleWorkAfterWake: stale,
          guardRejected: rejected,
          tokenWouldBeRejected: newToken !== null && oldToken < newToken,
          revokedReportAfterWakeMs: revoked ? round(revoked.atMs - wakeAt, 2) : null,
          revokeReason: revoked?.reason ?? null,
          splitBrainOverlaps: report.overlaps.length,
          staleWorkAll: report.staleWork.length,
        };
        out.push(round1);
        s.log(
          `    round ${r + 1}/${rounds}: token ${oldToken} → ${newToken}, work after wake ${work.length} (stale ${stale}), revoked reported ${round1.revokedReportAfterWakeMs} ms after SIGCONT (${round1.revokeReason})`,
        );
        // The woken candidate is a follower now; keep it for the next round.
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
  return { rounds: out, freezeMs, failures };
}
