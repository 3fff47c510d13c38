import type { PostgresReplicatedEnvironment } from '@conclave/postgres/testing';
import { RECOVERY_SLACK_MS, delay, leadershipIntervals, monotonicMs, type FailoverKind, type FaultCluster } from '@conclave/test-harness';

/** What one staged failover did, for the test's assertions and its log. */
export interface FailoverOutcome {
  kind: FailoverKind;
  /** ms from the failover's start until the endpoint reached the promoted standby. */
  switchMs: number;
  /** ms from the failover's start until a candidate was elected after the switch (null: none within the wait). */
  recoveredMs: number | null;
  /** ms from the end of the last term before that election to its start: time without a leader. */
  leaderlessMs: number | null;
  /** The failover's allowance: its switch, two leases and the harness's slack. */
  boundMs: number;
  tokens: { before: number | null; after: number | null };
  /** Terms that started between the failover's start and the switch (on the old primary). */
  termsBeforeSwitch: number;
}

/**
 * Stages one failover of `kind` under a leading candidate and waits for the next leader. In
 * `kill-lagging`, the leader steps down while the replication link is stalled, so the old
 * primary grants a term the promoted standby never hears of (the case where a token could be
 * handed out twice).
 */
export async function failoverScenario(cluster: FaultCluster, kind: FailoverKind): Promise<FailoverOutcome> {
  const leaseMs = cluster.leaseMs;
  if ((await cluster.waitForLeader(20_000)) === null) throw new Error(`no leader before the ${kind} failover`);
  // The standby of the last failover is rebuilt in the background: the failover below starts at once.
  await (cluster.env as unknown as PostgresReplicatedEnvironment).standbyReady();
  const startedAt = monotonicMs();
  const leader = cluster.leader();
  const before = leadershipIntervals(cluster.history()).filter((i) => i.startMs <= startedAt).at(-1)?.token ?? null;
  const switching = cluster.env.failover!(kind);
  if (kind === 'kill-lagging') {
    // The link is stalled at once (the standby is ready); a new term now stays on the old primary.
    await delay(leaseMs / 6);
    leader?.proc.send({ type: 'stepDown' });
  }
  const { switchMs } = await switching;
  const switchedAt = monotonicMs();
  const boundMs = switchMs + 2 * leaseMs + RECOVERY_SLACK_MS;
  let next = null;
  while (next === null && monotonicMs() - startedAt < boundMs + 5000) {
    next = leadershipIntervals(cluster.history()).find((i) => i.startMs > switchedAt) ?? null;
    if (next === null) await delay(50);
  }
  let leaderlessMs: number | null = null;
  if (next !== null) {
    const start = next.startMs;
    const earlierEnd = Math.max(startedAt, ...leadershipIntervals(cluster.history()).filter((i) => i.startMs < start).map((i) => i.endMs));
    leaderlessMs = Math.max(0, start - earlierEnd);
  }
  // Let the new term settle before anything else happens.
  await delay(500);
  return {
    kind,
    switchMs,
    recoveredMs: next === null ? null : Math.round(next.startMs - startedAt),
    leaderlessMs: leaderlessMs === null ? null : Math.round(leaderlessMs),
    boundMs,
    tokens: { before, after: next?.token ?? null },
    termsBeforeSwitch: leadershipIntervals(cluster.history()).filter((i) => i.startMs > startedAt && i.startMs <= switchedAt).length,
  };
}
