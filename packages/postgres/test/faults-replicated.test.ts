import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FaultCluster, safetyProblems, type FailoverKind } from '@conclave/test-harness';
import { postgresKit } from '@conclave/postgres/testing';
import { failoverScenario, type FailoverOutcome } from './replicated-failover';

// A primary and an asynchronous standby behind one endpoint (the `replicated` topology), three
// candidate processes, and a failover of each kind the environment stages: the standby caught up
// (`kill`), missing the latest terms (`kill-lagging`), and a planned switch-over (`graceful`).
// FAILOVER_RUNS=<n> repeats each of them n times on one cluster; `npm run soak -- --backend
// postgres --topology replicated` mixes them with the other faults.

const RUNS = Number(process.env.FAILOVER_RUNS ?? 1);
const KINDS: readonly FailoverKind[] = ['kill', 'kill-lagging', 'graceful'];

describe('postgres replicated: the endpoint moves to a promoted standby', () => {
  let cluster: FaultCluster | null = null;
  beforeAll(async () => {
    cluster = await FaultCluster.start({ backend: postgresKit, topology: 'replicated', label: 'pg-failover', leaseMs: 1500 });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  test(`${KINDS.join(', ')} (×${RUNS}): never two leaders, every new term above the earlier ones, a leader again within the failover's time + 2 leases`, async () => {
    const c = cluster!;
    const outcomes: FailoverOutcome[] = [];
    for (let run = 0; run < RUNS; run++) for (const kind of KINDS) outcomes.push(await failoverScenario(c, kind));
    console.log(outcomes.map((o) => JSON.stringify(o)).join('\n'));
    const { detail, problems } = safetyProblems(c);
    expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
    expect(outcomes.map((o) => ({ kind: o.kind, recovered: o.recoveredMs !== null && o.recoveredMs <= o.boundMs }))).toEqual(outcomes.map((o) => ({ kind: o.kind, recovered: true })));
  }, 60_000 + RUNS * 60_000);
});
