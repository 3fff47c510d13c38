import { describe, expect, test } from '@jest/globals';
import { leaderOf } from '../campaign-result';
import type { SuiteContext } from './suite-context';

/** tokenFloor.raise (used by migrations), where the backend has the part. */
export function describeTokenFloor(ctx: () => SuiteContext, supported: boolean): void {
  describe('token floor', () => {
    const floorTest = supported ? test : test.skip;
    floorTest(
      supported
        ? 'raiseTokenFloor puts the next term above the floor and leaves the current term alone'
        : 'raiseTokenFloor (skipped: the backend has no tokenFloor part)',
      async () => {
        const c = ctx();
        const election = c.election('floor');
        const a = await c.backend();
        // On an election nobody has used yet.
        await a.tokenFloor!.raise(election, 1000);
        const first = await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
        if (first.role !== 'leader') throw new Error('a should lead an empty election');
        expect(first.token).toBeGreaterThan(1000);
        // While a term runs, its token and its renewals are untouched.
        const floor = first.token + 500_000;
        await a.tokenFloor!.raise(election, floor);
        expect(await a.getLeader(election)).toMatchObject({ candidateId: 'a', token: first.token });
        const renewed = await a.renew({ election, candidateId: 'a', token: first.token, leaseMs: c.leaseMs });
        expect(renewed.held).toBe(true);
        // A lower floor never lowers anything.
        await a.tokenFloor!.raise(election, 5);
        await a.release({ election, candidateId: 'a' });
        const next = await a.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs });
        expect(leaderOf(next).token).toBeGreaterThan(floor);
        await a.release({ election, candidateId: 'b' });
      },
    );
  });
}
