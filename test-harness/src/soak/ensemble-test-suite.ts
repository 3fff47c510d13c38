import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { BackendKit } from '../kits/backend-kit';
import { kitLabel } from '../kits/load-backend-kit';
import { FaultCluster } from './fault-cluster';
import { ensembleScenario } from './fault-scenarios';
import { safetyProblems } from './fault-test-suite';

export interface DirectedEnsembleOptions {
  /** The describe block's title. */
  title: string;
  /** The directed test's title, in the words of the kit's store (server, member, Raft leader…). */
  testName: string;
  /** Longest start of the three servers, ms. Default 120 000. */
  startTimeoutMs?: number;
  /** More tests on the same cluster, run after the directed one (`cluster()` is started by then). */
  more?: (cluster: () => FaultCluster) => void;
}

/**
 * The directed test of a three-server cluster, for a kit with the `ensemble` topology: a server
 * isolated from its peers while its clients still reach it, the cluster's leader killed and
 * restarted, a candidate cut from its server (`ensembleScenario`). Never two leaders, no token
 * regression, no stale work or write, and a leader within the lease plus the kit's recovery margin
 * after each step. The cluster is stopped in afterAll, even on failure.
 */
export function describeDirectedEnsemble(kit: BackendKit | string, options: DirectedEnsembleOptions): void {
  describe(options.title, () => {
    let cluster: FaultCluster | null = null;
    beforeAll(async () => {
      cluster = await FaultCluster.start({ backend: kit, topology: 'ensemble', label: `${kitLabel(kit)}-ensemble-directed` });
    }, options.startTimeoutMs ?? 120_000);
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);
    const started = () => {
      if (!cluster) throw new Error('the cluster did not start');
      return cluster;
    };

    test(options.testName, async () => {
      const c = started();
      const bound = c.leaseMs + c.env.recoveryMarginMs;
      const { steps, waits } = await ensembleScenario(c, bound);
      const { detail, problems } = safetyProblems(c);
      expect({ detail, steps, ...problems }).toEqual({ detail, steps, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
      expect({ steps, recovered: waits.map((w) => w !== null && w <= bound) }).toEqual({ steps, recovered: waits.map(() => true) });
    }, 150_000);

    options.more?.(started);
  });
}
