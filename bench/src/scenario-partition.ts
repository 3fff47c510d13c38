/** A leader cut off from the server without a reset: when it steps down, when another leads. */
import { checkSplitBrain, startTcpProxy, type CandidateReport, type TcpProxy } from '@conclave/test-harness/tools';
import type { BenchTarget } from './servers';
import { dispose, firstReport, startCandidate, waitLeader, type BenchCandidate } from './scenario-candidates';
import { electionName, type BenchSettings } from './scenario-settings';
import { nowMs, round, sleep } from './util';

export interface PartitionRound {
  /** ms from the blackhole to the old leader's `revoked` (null: never within the round). */
  oldLeaderRevokedMs: number | null;
  revokeReason: string | null;
  /** ms from the blackhole to another candidate's `elected`. */
  newLeaderElectedMs: number;
  /** Old leader stepped down this long before the new election (negative: after). */
  marginMs: number | null;
  /** Work units by the old leader stamped after the new leader's election: target 0. */
  workAfterNewLeader: number;
  splitBrainOverlaps: number;
}

export interface PartitionResult {
  rounds: PartitionRound[];
  failures: string[];
}

/**
 * Each candidate talks to the server through its own TCP proxy. The leader's proxy is
 * blackholed (bytes held, sockets open: no reset, no FIN); we time its step-down and the next
 * election and count its work after that election.
 */
export async function silentPartition(target: BenchTarget, rounds: number, s: BenchSettings): Promise<PartitionResult> {
  const election = electionName('partition');
  const out: PartitionRound[] = [];
  const failures: string[] = [];
  let cs: Array<{ c: BenchCandidate; proxy: TcpProxy }> = [];
  const drop = async (x: { c: BenchCandidate; proxy: TcpProxy }) => {
    await dispose(x.c);
    await x.proxy.close();
  };
  try {
    for (let r = 0; r < rounds; r++) {
      try {
        while (cs.length < s.candidates) {
          const proxy = await startTcpProxy({ targetPort: target.port });
          try {
            cs.push({ c: await startCandidate(target, target.url(proxy.port), election, 10, s.leaseMs), proxy });
          } catch (err) {
            await proxy.close();
            throw err;
          }
        }
        const leader = await waitLeader(cs.map((x) => x.c), s.leaseMs * 4);
        await sleep(600);
        const lx = cs.find((x) => x.c === leader)!;
        const others = cs.filter((x) => x !== lx).map((x) => x.c);
        const next = firstReport(others, (rep) => rep.type === 'elected', s.leaseMs * 6, 'election after the partition');
        const t0 = nowMs();
        lx.proxy.blackhole();
        const { report: electedRep } = await next;
        await sleep(1000);
        const t1 = electedRep.atMs;
        const revoked = leader.reports.find((rep) => rep.type === 'revoked' && rep.atMs >= t0) as
          | Extract<CandidateReport, { type: 'revoked' }>
          | undefined;
        const workAfter = leader.reports.filter((rep) => rep.type === 'work' && rep.atMs >= t1).length;
        const report = checkSplitBrain(cs.flatMap((x) => x.c.history()).filter((e) => e.atMs > t0 - 2000));
        const pr: PartitionRound = {
          oldLeaderRevokedMs: revoked ? round(revoked.atMs - t0, 1) : null,
          revokeReason: revoked?.reason ?? null,
          newLeaderElectedMs: round(t1 - t0, 1)!,
          marginMs: revoked ? round(t1 - revoked.atMs, 1) : null,
          workAfterNewLeader: workAfter,
          splitBrainOverlaps: report.overlaps.length,
        };
        out.push(pr);
        s.log(
          `    round ${r + 1}/${rounds}: old leader revoked at +${pr.oldLeaderRevokedMs} ms (${pr.revokeReason}), new leader at +${pr.newLeaderElectedMs} ms, work after it ${workAfter}`,
        );
        cs = cs.filter((x) => x !== lx);
        await drop(lx);
      } catch (err) {
        failures.push(`round ${r + 1}: ${(err as Error).message}`);
        s.log(`    round ${r + 1}/${rounds}: FAILED ${(err as Error).message}`);
        await Promise.all(cs.map(drop));
        cs = [];
      }
    }
  } finally {
    await Promise.all(cs.map(drop));
  }
  return { rounds: out, failures };
}
