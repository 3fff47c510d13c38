import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, RECOVERY_SLACK_MS, delay, leadershipIntervals, monotonicMs, safetyProblems, type FailoverKind } from '@conclave/test-harness';
import { mysqlKit } from '@conclave/mysql/testing';

// A private MariaDB primary and its asynchronous replica behind one endpoint (the `replicated`
// topology), three candidate processes, and the primary replaced: SIGKILLed with the replica
// caught up, SIGKILLed with replication stalled for half a lease (during which a new term starts
// on the primary and never reaches the replica), and a planned switch-over. Each scenario once;
// FAILOVER_RUNS=<n> repeats each n times, and `npm run soak -- --backend mysql --topology
// replicated` draws failovers among random faults.

const LEASE_MS = 1500;
const RUNS = Number(process.env.FAILOVER_RUNS ?? 1);

interface FailoverOutcome {
  switchMs: number;
  /** From the end of the switch to the first election of a new term, ms. */
  electedAfterSwitchMs: number;
  /** From the end of the last earlier term (as its leader counted it) to the new one, ms. */
  noLeaderMs: number;
  tokenBefore: number;
  tokenAfter: number;
}

function electedTokens(c: FaultCluster): Array<{ token: number; atMs: number }> {
  return c.processes.flatMap((p) => p.reports.flatMap((r) => (r.type === 'elected' ? [{ token: r.token, atMs: r.atMs }] : [])));
}

/**
 * One failover of `kind` while a leader renews: returns when a new term has started after it.
 * With `newTermWhileStalled`, the leader steps down a quarter lease into the stall, so the old
 * primary starts a term its replica never sees.
 */
async function failoverScenario(c: FaultCluster, kind: FailoverKind, newTermWhileStalled: boolean): Promise<FailoverOutcome> {
  await (c.env as unknown as { replicaReady(): Promise<void> }).replicaReady();
  expect(await c.waitForLeader(c.leaseMs + c.env.recoveryMarginMs)).not.toBeNull();
  // Renewals the replica will have seen (or, stalled, not).
  await delay(c.leaseMs);
  const tokenBefore = Math.max(...electedTokens(c).map((e) => e.token));
  const leader = c.leader();
  const failing = c.env.failover!(kind);
  if (newTermWhileStalled) {
    await delay(c.leaseMs / 4);
    leader?.proc.send({ type: 'stepDown' });
  }
  const record = await failing;
  const switchedAt = monotonicMs();
  const bound = 2 * c.leaseMs + RECOVERY_SLACK_MS;
  let next: { token: number; atMs: number } | undefined;
  while (!next && monotonicMs() - switchedAt < bound + 5000) {
    next = electedTokens(c).find((e) => e.token > tokenBefore && e.atMs > switchedAt);
    if (!next) await delay(20);
  }
  expect(next).toBeDefined();
  const earlier = leadershipIntervals(c.history()).filter((i) => i.startMs < next!.atMs && i.token !== next!.token);
  const lastEnd = Math.max(...earlier.map((i) => i.endMs));
  return {
    switchMs: record.switchMs,
    electedAfterSwitchMs: Math.round(next!.atMs - switchedAt),
    noLeaderMs: Math.round(next!.atMs - lastEnd),
    tokenBefore,
    tokenAfter: next!.token,
  };
}

describe('mysql primary replaced by its asynchronous replica', () => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend: mysqlKit, topology: 'replicated', leaseMs: LEASE_MS, label: 'mysql-failover' });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  const scenarios: Array<[FailoverKind, boolean, string]> = [
    ['kill-lagging', true, 'killed with replication stalled and a term the replica never saw'],
    ['kill', false, 'killed with the replica caught up'],
    ['graceful', false, 'switched over as planned'],
  ];
  for (const [kind, newTermWhileStalled, what] of scenarios) {
    test(`primary ${what}: never two leaders, every new term's token above the earlier ones, a leader again within 2 leases (+ slack) of the switch`, async () => {
      const c = cluster!;
      const outcomes: FailoverOutcome[] = [];
      for (let run = 0; run < RUNS; run++) outcomes.push(await failoverScenario(c, kind, newTermWhileStalled));
      console.log(`mysql failover ${kind}: ${JSON.stringify(outcomes)}`);
      const { detail, problems } = safetyProblems(c);
      expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
      for (const o of outcomes) {
        expect(o.tokenAfter).toBeGreaterThan(o.tokenBefore);
        // Liveness, from the protocol: the fence on the promoted replica lasts one lease from its
        // first write (at most the row's own lease, the same here), and a follower looks again
        // within a lease after it ends; RECOVERY_SLACK_MS is the harness's allowance for
        // reconnection and scheduling on a loaded machine.
        expect(o.electedAfterSwitchMs).toBeLessThanOrEqual(2 * c.leaseMs + RECOVERY_SLACK_MS);
      }
    }, 60_000 * RUNS);
  }
});
