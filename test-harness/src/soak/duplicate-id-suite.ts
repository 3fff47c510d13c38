import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { BackendKit } from '../kits/backend-kit';
import { kitLabel } from '../kits/load-backend-kit';
import { FaultCluster } from './fault-cluster';
import { duplicateIdScenario } from './fault-scenarios';
import { safetyProblems, topologyFaultRunTest } from './fault-test-suite';

/**
 * Two candidate processes started with one candidate id (a pod restarted under its old name while
 * the old process still runs), next to a third candidate, on the backend's single private
 * server: directed (the leading duplicate frozen, killed and replaced under the same id, stepped
 * down) and a seeded random run of `options.seed`. The checker tells the two apart by process, so
 * if they share a term — or lead at once under two terms — it reports an overlap.
 * FAULT_SEED=<n> replays a seed, FAULT_RUN_MS sets the run's length.
 */
export function describeDuplicateIdFaults(kit: BackendKit | string, options: { seed: number }): void {
  const backend = kitLabel(kit);
  describe(`duplicate candidate id on ${backend}`, () => {
    let cluster: FaultCluster | null = null;
    beforeAll(async () => {
      cluster = await FaultCluster.start({ backend: kit, topology: 'duplicate-id', label: `${backend}-duplicate-id` });
    }, 90_000);
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);

    test(`${backend}: two processes with one id never lead at once nor share a term`, async () => {
      const c = cluster!;
      const led = await duplicateIdScenario(c);
      const { detail, problems } = safetyProblems(c);
      expect({ detail, ...problems }).toEqual({ detail, overlaps: [], tokenRegressions: [], staleWork: [], workOutsideTerm: [], staleWrites: [], sharedTokens: [] });
      expect(led).toBeGreaterThan(0);
    }, 120_000);

    topologyFaultRunTest(kit, 'duplicate-id', { seed: options.seed, runMs: 20_000 });
  });
}
