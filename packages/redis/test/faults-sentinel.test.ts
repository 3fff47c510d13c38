import { afterEach, describe, expect, test } from '@jest/globals';
import { FaultCluster, RECOVERY_SLACK_MS, delay, leadershipIntervals, monotonicMs, safetyProblems, type FailoverKind, type LeadershipInterval } from '@conclave/test-harness';
import { redisKit } from '@conclave/redis/testing';

/**
 * A master, a replica and Sentinel (the `sentinel` topology); three candidate processes find the
 * master through Sentinel. Each failover kind once (SENTINEL_RUNS=<n> repeats each; the long run
 * is `npm run soak -- --backend redis --topology sentinel`): never two leaders, tokens rising, and
 * a leader again within the switch plus two leases (the promoted master's restart fence, then a
 * candidate's look), plus the harness's slack for a loaded machine.
 */
const LEASE_MS = 1500;
const RUNS = Math.max(1, Number(process.env.SENTINEL_RUNS ?? 1));
/** When the rolling deploy restarts a follower, ms after the failover began. */
const RESTART_AFTER_MS = 2500;

let cluster: FaultCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
}, 60_000);

/** The longest stretch of [fromMs, toMs] that no leadership interval covers. */
function longestLeaderless(intervals: readonly LeadershipInterval[], fromMs: number, toMs: number): number {
  let longest = 0;
  let covered = fromMs;
  for (const i of [...intervals].sort((a, b) => a.startMs - b.startMs)) {
    if (i.endMs <= covered) continue;
    if (i.startMs > covered) longest = Math.max(longest, Math.min(i.startMs, toMs) - covered);
    covered = Math.max(covered, i.endMs);
    if (covered >= toMs) break;
  }
  return Math.max(longest, toMs - covered);
}

/**
 * Each process's elections, revocations and logged warnings, ms from the fault: printed when no
 * leader came back, or with SENTINEL_TIMELINE=1.
 */
function printTimeline(c: FaultCluster, faultAt: number): void {
  const lines: string[] = [];
  for (const p of c.processes) {
    for (const r of p.reports) {
      if (r.atMs >= faultAt - 2000 && ['log', 'elected', 'revoked', 'leader'].includes(r.type)) lines.push(`${p.key} ${Math.round(r.atMs - faultAt)} ${JSON.stringify(r)}`);
    }
  }
  console.log(lines.join('\n'));
}

interface Scenario {
  name: string;
  kind: FailoverKind;
  /** A rolling deploy: one follower process stopped and started again this long after the failover began. */
  restartFollowerAfterMs?: number;
  /**
   * The leader's link to Sentinel goes silent before the failover, so it does not hear
   * `+switch-master` (ioredis' failoverDetector) and stays on the old master: only the replicas'
   * acknowledgement can stop that master from confirming it.
   */
  leaderDeafToSentinel?: boolean;
}

const SCENARIOS: Scenario[] = [
  // A plain SENTINEL FAILOVER is in the soak's draws (`npm run soak -- --backend redis --topology
  // sentinel`); here it comes with the rolling deploy that made it unsafe.
  { name: 'the master SIGKILLed, its replica caught up', kind: 'kill' },
  {
    name: 'SENTINEL FAILOVER, the leader deaf to Sentinel, while a follower restarts 2.5 s in and reaches the new master',
    kind: 'graceful',
    restartFollowerAfterMs: RESTART_AFTER_MS,
    leaderDeafToSentinel: true,
  },
  {
    name: 'the master cut off from its replica and Sentinel, still writable, the leader on it deaf to Sentinel too',
    kind: 'cut-off',
    leaderDeafToSentinel: true,
  },
];

describe('redis with a replica and Sentinel: failovers', () => {
  for (const scenario of SCENARIOS) {
    for (let run = 1; run <= RUNS; run++) {
      test(`${scenario.name}${RUNS > 1 ? ` (run ${run})` : ''}: never two leaders, tokens rising, a leader again within the switch plus two leases`, async () => {
        const c = (cluster = await FaultCluster.start({ backend: redisKit, topology: 'sentinel', leaseMs: LEASE_MS, label: `sentinel-${scenario.kind}` }));
        expect(await c.waitForLeader(20_000)).not.toBeNull();
        // A leader that has renewed (every third of a lease), so its lease is well alive at the fault.
        await delay(LEASE_MS / 2);
        if (scenario.leaderDeafToSentinel) c.leader()!.links[0]!.blackhole();
        const faultAt = monotonicMs();
        const restart = scenario.restartFollowerAfterMs
          ? (async () => {
              await delay(scenario.restartFollowerAfterMs!);
              const follower = c.slots.find((s) => !c.leadingNow(s))!;
              await follower.proc.stop();
              await c.spawn(follower);
            })()
          : Promise.resolve();
        const record = await c.env.failover!(scenario.kind);
        await restart;
        // Watch until a leader has worked after the switch, and for three leases after the switch
        // (or the restart): time for the promoted master's fence to end and a candidate on it to
        // be elected while the old master, deposed but writable, may still confirm its leader.
        const bound = record.switchMs + 2 * LEASE_MS + RECOVERY_SLACK_MS;
        const leader = await c.waitForLeader(bound + 10_000, faultAt + record.switchMs);
        if (leader === null || process.env.SENTINEL_TIMELINE) printTimeline(c, faultAt);
        expect(leader).not.toBeNull();
        const watchUntil = faultAt + Math.max(record.switchMs, scenario.restartFollowerAfterMs ?? 0) + 3 * LEASE_MS;
        await delay(Math.max(LEASE_MS / 2, watchUntil - monotonicMs()));
        const endAt = monotonicMs();
        await c.stopCandidates();

        const { detail, problems } = safetyProblems(c);
        const intervals = leadershipIntervals(c.history());
        const leaderless = Math.round(longestLeaderless(intervals, faultAt, endAt));
        const tokens = intervals.map((i) => i.token);
        // Figures for the record of a run.
        console.log(
          `sentinel ${scenario.kind}${scenario.restartFollowerAfterMs ? ' + restart' : ''}: switch ${record.switchMs} ms, longest without a leader ${leaderless} ms (bound ${bound}), terms ${intervals.length}, tokens ${tokens.join(' < ')}; ${detail}`,
        );
        expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
        expect(leaderless).toBeLessThanOrEqual(bound);
      }, 90_000);
    }
  }
});
