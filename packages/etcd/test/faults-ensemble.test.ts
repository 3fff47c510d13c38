import { expect, test } from '@jest/globals';
import { connectedServer, delay, describeDirectedEnsemble, safetyProblems } from '@conclave/test-harness';
import { etcdKit } from '@conclave/etcd/testing';

// An etcd cluster of three members, each candidate behind its own proxy to each member and the
// members' peer traffic behind proxies that can cut one member from the others: a member isolated
// (silently, then by resets) while its clients still reach it, the Raft leader killed and
// restarted, a candidate cut from the member it uses; a member down for several leases. The
// seeded random run on such a cluster is faults-ensemble-random.test.ts.

describeDirectedEnsemble(etcdKit, {
  title: 'etcd cluster of three',
  testName: 'member isolated, Raft leader killed and restarted, client cut from its member: never two leaders, a leader after each',
  startTimeoutMs: 90_000,
  more: (cluster) => {
    test('a member down for three leases (the one the leader uses, then the Raft leader): a leader throughout the outage, never two', async () => {
      const c = cluster();
      const bound = c.leaseMs + c.env.recoveryMarginMs;
      const steps: string[] = [];
      const during: Array<number | null> = [];
      const after: Array<number | null> = [];
      for (const which of ['client', 'raft-leader'] as const) {
        if ((await c.waitForLeader(bound)) === null) throw new Error(`no leader within ${bound} ms`);
        const leader = c.leader()!;
        const index = which === 'client' ? (connectedServer(leader) ?? 0) : ((await c.env.ensembleLeader!()) ?? 0);
        const server = c.env.servers[index]!;
        await server.kill();
        try {
          // Two members keep a quorum: a leader must be there within the bound, and still at the end.
          during.push(await c.waitForLeader(bound));
          await delay(3 * c.leaseMs);
          during.push(await c.waitForLeader(bound));
        } finally {
          await server.restart();
        }
        after.push(await c.waitForLeader(bound));
        steps.push(`member ${index} (${which}) down under ${leader.proc.key}: leader after ${during.slice(-2).map((w) => (w === null ? 'none' : Math.round(w))).join(', ')} ms`);
        await delay(c.leaseMs);
      }
      const { detail, problems } = safetyProblems(c);
      expect({ detail, steps, ...problems }).toEqual({ detail, steps, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
      expect({ steps, during: during.map((w) => w !== null), after: after.map((w) => w !== null) }).toEqual({ steps, during: during.map(() => true), after: after.map(() => true) });
    }, 90_000);
  },
});
