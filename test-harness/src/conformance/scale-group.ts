import { describe, expect, test } from '@jest/globals';
import type { Elector } from '@conclave/core';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** Many elections at once on one backend per "process": each still has exactly one leader. */
export function describeScale(ctx: () => SuiteContext, elections: number): void {
  describe('scale', () => {
    test(`${elections} elections at once, two candidates each, one backend per candidate side`, async () => {
      const c = ctx();
      const left = await c.backend();
      const right = await c.backend();
      const pairs: Array<[Elector, Elector]> = [];
      for (let i = 0; i < elections; i++) {
        const election = c.election(`many${i}`);
        pairs.push([await c.elector(election, 'left', { backend: left }), await c.elector(election, 'right', { backend: right })]);
      }
      await Promise.all(pairs.flat().map((e) => e.start()));
      const oneLeaderEach = () => pairs.every(([a, b]) => a.isLeader() !== b.isLeader());
      await waitFor(oneLeaderEach, `one leader in each of ${elections} elections`, 60_000, 50).catch((err: Error) => {
        throw new Error(`${err.message}: ${describeUnsettled(pairs)}`);
      });
      // Through a couple of renew intervals, every election keeps exactly one leader.
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, c.leaseMs / 3));
        const bad = pairs.filter(([a, b]) => a.isLeader() && b.isLeader());
        expect(bad.length).toBe(0);
      }
      await waitFor(oneLeaderEach, `still one leader in each of ${elections} elections`, 60_000, 50);
      await Promise.all(pairs.flat().map((e) => e.stop()));
      // Longer than the waits above, so that a wait that runs out reports which elections did not settle.
    }, 150_000);
  });
}

/** The elections without exactly one leader, and what their Electors say (the first three). */
function describeUnsettled(pairs: Array<[Elector, Elector]>): string {
  const unsettled = pairs.filter(([a, b]) => a.isLeader() === b.isLeader());
  const state = (e: Elector) => `${e.candidateId} ${JSON.stringify(e.state)} ${JSON.stringify(e.health())}`;
  return `${unsettled.length} unsettled; ${unsettled
    .slice(0, 3)
    .map(([a, b]) => `[${state(a)} | ${state(b)}]`)
    .join('; ')}`;
}
