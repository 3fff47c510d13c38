import { expect, test } from '@jest/globals';
import type { SuiteContext } from '../suite-context';
import { campaignUntilWon, leadThenFreezeAtGrantedRenewal } from './frozen-holder';
import { adminEndings } from './term-endings';

/** The server keeps a silent holder's lease to its end: no other candidate gets it earlier. */
export function addNoEarlyHandOnTest(ctx: () => SuiteContext): void {
  test('the server never hands the lease to another candidate before it ends', async () => {
    const c = ctx();
    const election = c.election('no-early');
    const { aToken, leaseEnd } = await leadThenFreezeAtGrantedRenewal(c, election);
    const b = await c.backend();
    // b campaigns without pause from now, through the end of the lease.
    const { won, lastRefusalAt } = await campaignUntilWon(c, b, election);
    expect(won.repliedAt).toBeGreaterThanOrEqual(leaseEnd);
    expect(won.token).toBeGreaterThan(aToken);
    // b was refused in the lease's last stretch: it did try early.
    expect(lastRefusalAt).toBeGreaterThan(leaseEnd - c.leaseMs / 4);
    await b.release({ election, candidateId: 'b' });
  });
}

/** The same after forceLeader/clearLeader revoked the lease of a holder that can no longer be told. */
export function addNoEarlyHandOnAfterAdminTests(ctx: () => SuiteContext): void {
  // The same at the backend: after the admin call, a follower campaigning without pause does
  // not get the lease before the revoked one ends, even though its holder went silent and can
  // no longer be told.
  test.each(adminEndings)('after %s the server hands the lease on only once the revoked lease ended', async (_name, act) => {
    const c = ctx();
    const election = c.election('admin-no-early');
    const { aToken, leaseEnd } = await leadThenFreezeAtGrantedRenewal(c, election);
    const b = await c.backend();
    // b is a candidate (ZooKeeper can only force one that campaigns) before the admin call.
    expect((await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs })).role).toBe('follower');
    const admin = await c.backend();
    const acted = act(admin, election);
    let outcome: Awaited<ReturnType<typeof campaignUntilWon>>;
    try {
      outcome = await campaignUntilWon(c, b, election);
    } finally {
      await acted;
    }
    expect(outcome.won.repliedAt).toBeGreaterThanOrEqual(leaseEnd);
    expect(outcome.won.token).toBeGreaterThan(aToken);
    expect(outcome.lastRefusalAt).toBeGreaterThan(leaseEnd - c.leaseMs / 4);
    await b.release({ election, candidateId: 'b' });
  });
}
