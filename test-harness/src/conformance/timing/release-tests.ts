import { performance } from 'node:perf_hooks';
import { expect, test } from '@jest/globals';
import type { Elector } from '@conclave/core';
import { candidateOfNullable } from '@conclave/core/spi';
import type { ControlledBackend } from '../../controlled-backend';
import { checkSplitBrain } from '../../history/split-brain-checker';
import { waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';
import { LONG_LEASE_MS } from './lease-grants';

const longElector = (c: SuiteContext, election: string, id: string, backend: ControlledBackend, retryMs: number) =>
  c.elector(election, id, { backend, leaseMs: LONG_LEASE_MS, retryMs });

/** Ending a term on purpose releases the lease: another candidate need not wait for it to run out. */
export function addReleaseTests(ctx: () => SuiteContext): void {
  test.each([
    ['stepDown()', async (a: Elector) => a.stepDown(), true],
    ['pause()', async (a: Elector) => a.pause(), false],
    ['stop()', async (a: Elector) => a.stop(), true],
  ] as const)('%s releases the lease at once: another candidate leads well within the lease', async (_name, end, releasedOnReturn) => {
    const c = ctx();
    const election = c.election('release');
    // a would campaign again only after 2 × its retryMs, past the bound below.
    const a = await longElector(c, election, 'a', await c.backend(), LONG_LEASE_MS / 5);
    await a.start();
    await waitFor(() => a.isLeader(), 'a to lead', LONG_LEASE_MS);
    const b = await longElector(c, election, 'b', await c.backend(), 100);
    await b.start();
    await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', LONG_LEASE_MS);
    const admin = await c.backend();
    const endedAt = performance.now();
    await end(a);
    expect(a.isLeader()).toBe(false);
    if (releasedOnReturn) expect((await admin.getLeader(election))?.candidateId).not.toBe('a');
    // Without a release, a's lease would keep b out for more than half a lease from here.
    const bound = LONG_LEASE_MS / 4;
    await waitFor(async () => (await admin.getLeader(election))?.candidateId !== 'a', 'the lease to be released', bound);
    await waitFor(() => b.isLeader(), 'b to lead', bound - (performance.now() - endedAt));
    expect(checkSplitBrain(c.history.events).overlaps).toEqual([]);
  });
}
