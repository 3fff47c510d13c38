import { describe, expect, test } from '@jest/globals';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** admin.electionExists: a name never used told apart from an election between terms. */
export function describeElectionExists(ctx: () => SuiteContext): void {
  describe('electionExists', () => {
    test(
      'electionExists is false for a name never used (reads and a clear leave no trace), true once campaigned for, and still after the release',
      async () => {
        const c = ctx();
        const election = c.election('exists');
        const admin = await c.backend();
        // What an admin tool does with a misspelt name first: none of it may make the election exist.
        expect(await admin.getLeader(election)).toBeNull();
        if (admin.candidates) expect(await admin.candidates.list(election)).toEqual([]);
        await admin.admin!.clearLeader(election);
        expect(await admin.admin!.electionExists(election)).toBe(false);

        const a = await c.elector(election, 'a');
        await a.start();
        await waitFor(() => a.isLeader(), 'a to lead');
        expect(await admin.admin!.electionExists(election)).toBe(true);

        await a.stop();
        // Between terms: nobody leads, nobody campaigns, and the election still exists.
        expect(await admin.getLeader(election)).toBeNull();
        if (admin.candidates) expect(await admin.candidates.list(election)).toEqual([]);
        expect(await admin.admin!.electionExists(election)).toBe(true);
      },
    );

  });
}
