/** The steady-state cost: server operations and round trips per second of a leader and a follower. */
import type { BenchTarget } from './servers';
import { startCountingProxy, type CountingProxy } from './counting-proxy';
import { disposeAll, startCandidate, waitLeader, type BenchCandidate } from './scenario-candidates';
import { electionName, type BenchSettings } from './scenario-settings';
import { nowMs, round, sleep } from './util';

export interface RateSample {
  /** Server operations per second attributed to one process (see the phase notes). */
  serverOpsPerSec: number | null;
  /** Redis: network reads per second on the server (≈ round trips). */
  serverReadsPerSec: number | null;
  /** Client→server bursts per second through the process's counting proxy (≈ round trips). */
  clientSendsPerSec: number | null;
  /** HTTP/2 bursts per second of acknowledgements and flow control only, not round trips (absent: none or not measured). */
  controlBurstsPerSec?: number | null;
}

export interface SteadyResult {
  windowMs: number;
  /** The core's default renew interval for the lease, ms (a third of it). */
  renewMs: number;
  /**
   * The renew interval the leader of phase A kept, ms: the mean gap between its renewals in the
   * window (null when it reported fewer than 3, e.g. a peer). The core renews sooner than
   * `renewMs` when the backend grants less than the lease (at half the usable grant).
   */
  measuredRenewMs?: number | null;
  leader: RateSample;
  follower: RateSample;
  /** One process leading `manyCount` elections alone (conclave only: null for the peers). */
  manyLeader: (RateSample & { elections: number; splitBurstsPerSec: number | null }) | null;
}

async function measure(
  target: BenchTarget,
  proxies: CountingProxy[],
  windowMs: number,
): Promise<{ ops: number; reads: number | null; sends: number[]; controls: number[]; splits: number[]; seconds: number; t0: number; t1: number }> {
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
  // Acknowledgement-only bursts (HTTP/2): recorded beside the round trips, plain counts.
  const controls = proxies.map((p) => p.controlTimes.filter((t) => t >= t0 && t < t1).length);
  // Bursts that follow another within 100 ms: a renewal batch split over several turns.
  const splits = proxies.map((p) => {
    const ts = p.times.filter((t) => t >= t0 && t < t1);
    return ts.filter((t, i) => i > 0 && t - ts[i - 1]! < 100).length;
  });
  // A server's counters leave out its own probes' operations (ServerCounters); the window still
  // holds one probe's network read (its INFO), which `reads` takes off.
  return {
    ops: c1.ops - c0.ops,
    reads: c0.reads !== null && c1.reads !== null ? c1.reads - c0.reads - 1 : null,
    sends,
    controls,
    splits,
    seconds,
    t0,
    t1,
  };
}

/** The mean gap between the renewals `c` reported from `t0` to `t1`, ms; null under 3 of them. */
function renewIntervalOf(c: BenchCandidate, t0: number, t1: number): number | null {
  const ts = c.reports.filter((r) => r.type === 'lease' && r.atMs >= t0 && r.atMs < t1).map((r) => r.atMs);
  return ts.length >= 3 ? round((ts[ts.length - 1]! - ts[0]!) / (ts.length - 1), 1) : null;
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
    const measuredRenewMs = renewIntervalOf(cs[0]!, a.t0, a.t1);
    const leader: RateSample = {
      serverOpsPerSec: rate(a.ops, a.seconds),
      serverReadsPerSec: rate(a.reads, a.seconds),
      clientSendsPerSec: rate(a.sends[0]!, a.seconds),
      controlBurstsPerSec: rate(a.controls[0]!, a.seconds),
    };
    s.log(`    leader alone: ${JSON.stringify(leader)}, renewing every ${measuredRenewMs ?? '—'} ms`);
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
      controlBurstsPerSec: rate((b.controls[1]! + b.controls[2]!) / 2, b.seconds),
    };
    s.log(`    per follower: ${JSON.stringify(follower)} (leader during phase B: ${rate(b.sends[0]!, b.seconds)}/s sends)`);
    await disposeAll(cs);
    cs.length = 0;
    await sleep(500);
    if (!startMany) return { windowMs, renewMs, measuredRenewMs, leader, follower, manyLeader: null };

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
        controlBurstsPerSec: rate(c.controls[0]!, c.seconds),
        /** Bursts per second that came < 100 ms after another (a batch split over several turns). */
        splitBurstsPerSec: rate(c.splits[0]!, c.seconds),
      };
      s.log(`    one process leading ${manyCount} elections: ${JSON.stringify(manyLeader)}`);
      return { windowMs, renewMs, measuredRenewMs, leader, follower, manyLeader };
    } finally {
      await many.stop();
    }
  } finally {
    await disposeAll(cs);
    await Promise.all(proxies.map((p) => p.close()));
  }
}
