import { expect } from '@jest/globals';
import { checkSplitBrain, waitFor } from '@conclave/test-harness';
import { MixedFleet, seeded, type MigrationPair } from './migration-fixtures';

/** Waits until a dual node leads (a term that holds both stores). */
async function aDualLeads(fleet: MixedFleet): Promise<void> {
  await waitFor(() => fleet.electors.some((e) => e.isLeader() && e.candidateId.startsWith('dual-')), 'a dual node to lead', 30_000);
}

/**
 * A rolling migration between the two stores of `pair`, forward (old nodes beside dual ones, then
 * dual beside to-only) and back, with hand-overs at every step; then the verdict: never two
 * leaders, no token regression whichever store a leader's term came from, no stale work, and
 * leaders of more than one kind. As the migrate README requires, a dual node leads before the
 * first to-only node starts, and again before the first old node of the rollback: only a dual
 * term carries one store's tokens over to the other.
 */
export async function migrateForwardAndBack(pair: MigrationPair, seed: number): Promise<void> {
  const fleet = new MixedFleet(pair);
  try {
    fleet.startSampling();
    const random = seeded(seed);
    // Step 1: old nodes beside a dual one.
    const old = [await fleet.add('old'), await fleet.add('old')];
    await fleet.add('dual');
    await fleet.churn(2, random);
    // The old nodes are replaced by dual ones, then to-only nodes join (step 2).
    for (const e of old) await e.stop();
    await fleet.add('dual');
    await aDualLeads(fleet);
    const toOnly = [await fleet.add('to-only'), await fleet.add('to-only')];
    await fleet.churn(3, random);
    // Rolled back: the to-only nodes go, an old node comes back beside the dual ones.
    for (const e of toOnly) await e.stop();
    await aDualLeads(fleet);
    await fleet.add('old');
    await fleet.churn(3, random);

    const report = checkSplitBrain(fleet.history.events);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(report.overlaps).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
    expect(report.staleWork).toEqual([]);
    expect(fleet.workDone).toBeGreaterThan(0);
    // Leaders of more than one kind took part: the tokens were compared across the two stores.
    const kindsThatLed = new Set(report.intervals.map((i) => i.candidateId.replace(/-\d+$/, '')));
    expect(kindsThatLed.size).toBeGreaterThan(1);
  } finally {
    await fleet.close();
  }
}
