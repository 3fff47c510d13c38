/**
 * The single-election scenarios of bench/README.md, each on real candidate processes
 * (test-harness `CandidateProcess`: one Elector per forked process, reporting on the shared
 * monotonic clock).
 */
import { randomBytes } from 'node:crypto';
import { checkSplitBrain, startTcpProxy, type CandidateProcess, type CandidateReport, type TcpProxy } from '@conclave/test-harness/tools';
import type { BenchTarget } from './servers';
import { startCountingProxy, type CountingProxy } from './counting-proxy';
import { bounded, nowMs, round, sleep, summarize, trackChild, until, type Summary } from './util';

export interface BenchSettings {
  leaseMs: number;
  candidates: number;
  log: (line: string) => void;
}

let serial = 0;
const uniq = () => `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
export const electionName = (scenario: string) => `bench-${scenario}-${uniq()}`;

/** What the scenarios need of a candidate process: conclave's (test-harness) or a peer's. */
export type BenchCandidate = Pick<
  CandidateProcess,
  'reports' | 'killedAtMs' | 'id' | 'child' | 'leading' | 'onReport' | 'kill' | 'freeze' | 'thaw' | 'waitForExit' | 'history'
>;

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
async function dispose(c: BenchCandidate): Promise<void> {
  c.kill('SIGCONT');
  c.kill('SIGKILL');
  await bounded(c.waitForExit(), 10_000, `exit of ${c.id}`).catch(() => undefined);
}

async function disposeAll(cs: readonly BenchCandidate[]): Promise<void> {
  await Promise.all(cs.map(dispose));
}

/** The first report matching `match` from any of `cs`, from now on. */
function firstReport(
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

const waitLeader = (cs: readonly BenchCandidate[], ms: number) =>
  until(() => cs.find((c) => c.leading), ms, 'a leader among the candidates');

const lastElected = (c: BenchCandidate) =>
  [...c.reports].reverse().find((r): r is Extract<CandidateReport, { type: 'elected' }> => r.type === 'elected');

// ---- graceful hand-over and crash take-over ----------------------------------------------------

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

// ---- frozen leader ----------------------------------------------------------------------------

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

// ---- silent partition ---------------------------------------------------------------------------

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

// ---- steady-state cost -----------------------------------------------------------------------

export interface RateSample {
  /** Server operations per second attributed to one process (see the phase notes). */
  serverOpsPerSec: number | null;
  /** Redis: network reads per second on the server (≈ round trips). */
  serverReadsPerSec: number | null;
  /** Client→server bursts per second through the process's counting proxy (≈ round trips). */
  clientSendsPerSec: number | null;
}

export interface SteadyResult {
  windowMs: number;
  renewMs: number;
  leader: RateSample;
  follower: RateSample;
  /** One process leading `manyCount` elections alone. */
  /** One process leading `manyCount` elections alone (conclave only: null for the peers). */
  manyLeader: (RateSample & { elections: number; splitBurstsPerSec: number | null }) | null;
}

async function measure(
  target: BenchTarget,
  proxies: CountingProxy[],
  windowMs: number,
): Promise<{ ops: number; reads: number | null; sends: number[]; splits: number[]; seconds: number }> {
  const c0 = await target.counters();
  const t0 = nowMs();
  await sleep(windowMs);
  const c1 = await target.counters();
  const t1 = nowMs();
  const seconds = (t1 - t0) / 1000;
  // Round trips per second of each process: bursts in the window; when periodic, (n − 1) over the
  // span from the first to the last burst, so that where the window falls adds no ±1.
  const sends = proxies.map((p) => {
    const ts = p.times.filter((t) => t >= t0 && t < t1);
    return ts.length >= 3 ? ((ts.length - 1) / (ts[ts.length - 1]! - ts[0]!)) * 1000 * seconds : ts.length;
  });
  // Bursts that follow another within 100 ms: a renewal batch split over several turns.
  const splits = proxies.map((p) => {
    const ts = p.times.filter((t) => t >= t0 && t < t1);
    return ts.filter((t, i) => i > 0 && t - ts[i - 1]! < 100).length;
  });
  // The window holds exactly one of the two probes (MySQL: one statement; Redis: one read, INFO not counted as a command).
  const probeOps = target.kind === 'mysql' ? 1 : 0;
  return {
    ops: c1.ops - c0.ops - probeOps,
    reads: c0.reads !== null && c1.reads !== null ? c1.reads - c0.reads - 1 : null,
    sends,
    splits,
    seconds,
  };
}

/**
 * Phase A: one candidate alone (it leads): its rate. Phase B: two followers join: (total −
 * leader) / 2 per follower. Phase C: one process leading `manyCount` elections alone. Server
 * counters are global; the phases attribute them. Every process also goes through its own
 * counting proxy.
 */
export async function steadyState(
  target: BenchTarget,
  windowMs: number,
  manyCount: number,
  s: BenchSettings,
  startMany: ((url: string, count: number) => Promise<{ ready: Promise<void>; stop: () => Promise<void> }>) | null,
): Promise<SteadyResult> {
  const renewMs = Math.floor(s.leaseMs / 3);
  const election = electionName('steady');
  const proxies: CountingProxy[] = [];
  const cs: BenchCandidate[] = [];
  const rate = (n: number | null, sec: number) => (n === null ? null : round(n / sec, 2));
  try {
    const p0 = await startCountingProxy(target.port);
    proxies.push(p0);
    cs.push(await startCandidate(target, target.url(p0.port), election, 0, s.leaseMs));
    await waitLeader(cs, s.leaseMs * 4);
    await sleep(1500);
    const a = await measure(target, proxies, windowMs);
    const leader: RateSample = {
      serverOpsPerSec: rate(a.ops, a.seconds),
      serverReadsPerSec: rate(a.reads, a.seconds),
      clientSendsPerSec: rate(a.sends[0]!, a.seconds),
    };
    s.log(`    leader alone: ${JSON.stringify(leader)}`);
    for (let i = 0; i < 2; i++) {
      const p = await startCountingProxy(target.port);
      proxies.push(p);
      cs.push(await startCandidate(target, target.url(p.port), election, 0, s.leaseMs));
    }
    await sleep(2000);
    const b = await measure(target, proxies, windowMs);
    const followerSends = (b.sends[1]! + b.sends[2]!) / 2;
    const follower: RateSample = {
      serverOpsPerSec: rate((b.ops - (leader.serverOpsPerSec ?? 0) * b.seconds) / 2, b.seconds),
      serverReadsPerSec:
        b.reads === null ? null : rate((b.reads - (leader.serverReadsPerSec ?? 0) * b.seconds) / 2, b.seconds),
      clientSendsPerSec: rate(followerSends, b.seconds),
    };
    s.log(`    per follower: ${JSON.stringify(follower)} (leader during phase B: ${rate(b.sends[0]!, b.seconds)}/s sends)`);
    await disposeAll(cs);
    cs.length = 0;
    await sleep(500);
    if (!startMany) return { windowMs, renewMs, leader, follower, manyLeader: null };

    const pm = await startCountingProxy(target.port);
    proxies.push(pm);
    const many = await startMany(target.url(pm.port), manyCount);
    try {
      await many.ready;
      await sleep(2500);
      const c = await measure(target, [pm], windowMs);
      const manyLeader = {
        elections: manyCount,
        serverOpsPerSec: rate(c.ops, c.seconds),
        serverReadsPerSec: rate(c.reads, c.seconds),
        clientSendsPerSec: rate(c.sends[0]!, c.seconds),
        /** Bursts per second that came < 100 ms after another (a batch split over several turns). */
        splitBurstsPerSec: rate(c.splits[0]!, c.seconds),
      };
      s.log(`    one process leading ${manyCount} elections: ${JSON.stringify(manyLeader)}`);
      return { windowMs, renewMs, leader, follower, manyLeader };
    } finally {
      await many.stop();
    }
  } finally {
    await disposeAll(cs);
    await Promise.all(proxies.map((p) => p.close()));
  }
}
