import { describe, expect, test } from '@jest/globals';
import { supports } from '@conclave/core/spi';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** electionExists (when declared): a name never used told apart from an election between terms. */
export function describeElectionExists(ctx: () => SuiteContext, declared: boolean): void {
  describe('electionExists', () => {
    const existsTest = declared ? test : test.skip;
    existsTest(
      declared
        ? 'electionExists is false for a name never used (reads and a clear leave no trace), true once campaigned for, and still after the release'
        : 'electionExists (skipped: the backend does not declare capabilities.electionExists)',
      async () => {
        const c = ctx();
        const election = c.election('exists');
        const admin = await c.backend();
        // What an admin tool does with a misspelt name first: none of it may make the election exist.
        expect(await admin.getLeader(election)).toBeNull();
        if (supports(admin, 'listCandidates')) expect(await admin.listCandidates!(election)).toEqual([]);
        await admin.clearLeader(election);
        expect(await admin.electionExists!(election)).toBe(false);

        const a = await c.elector(election, 'a');
        await a.start();
        await waitFor(() => a.isLeader(), 'a to lead');
        expect(await admin.electionExists!(election)).toBe(true);

        await a.stop();
        // Between terms: nobody leads, nobody campaigns, and the election still exists.
        expect(await admin.getLeader(election)).toBeNull();
        if (supports(admin, 'listCandidates')) expect(await admin.listCandidates!(election)).toEqual([]);
        expect(await admin.electionExists!(election)).toBe(true);
      },
    );

    if (!declared) {
      test('electionExists is absent, from the backend and from a wrapper', async () => {
        const c = ctx();
        const admin = await c.backend();
        expect(admin.inner.electionExists).toBeUndefined();
        expect(admin.electionExists).toBeUndefined();
      });
    }
  });
}
