import { describe, expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { waitFor } from '../wait-for';
import { grantOf, LONG_LEASE_MS } from './timing/lease-grants';
import type { SuiteContext } from './suite-context';

/** getLeader, admin.forceLeader, admin.clearLeader and (with the part) candidates.list. */
export function describeAdminOperations(ctx: () => SuiteContext, listCandidates: boolean): void {
  describe('admin operations', () => {
    test('getLeader is null for an election nobody leads, then names the leader and its token', async () => {
      const c = ctx();
      const election = c.election('get');
      const admin = await c.backend();
      expect(await admin.getLeader(election)).toBeNull();
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      expect(await admin.getLeader(election)).toMatchObject({ candidateId: 'a', token: a.token });
    });

    test('forceLeader hands leadership to the named candidate in a new term', async () => {
      const c = ctx();
      const election = c.election('force');
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const aToken = a.token!;
      const b = await c.elector(election, 'b');
      await b.start();
      await waitFor(() => b.state.leaderId === 'a', 'b to see a lead');

      const admin = await c.backend();
      const forced = await admin.admin!.forceLeader(election, 'b');
      expect(forced.candidateId).toBe('b');
      expect(forced.token).toBeGreaterThan(aToken);
      expect(await admin.getLeader(election)).toMatchObject(forced);
      await waitFor(() => b.isLeader() && !a.isLeader(), 'b to lead and a to follow', c.leaseMs * 10);
      expect(b.token).toBe(forced.token);
      expect(a.state.reason).toBe('lease-lost');
    });

    test('forceLeader to the candidate that leads keeps it leading, in its term', async () => {
      const c = ctx();
      const election = c.election('force-self');
      // A long lease: the property does not depend on its length, and a renewal starved by a
      // loaded machine must not end the term (that would be a new term for another reason).
      const backend = await c.backend();
      const a = await c.elector(election, 'a', { backend, leaseMs: LONG_LEASE_MS, renewMs: Math.floor(c.leaseMs / 3), retryMs: Math.floor(c.leaseMs / 5) });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', LONG_LEASE_MS);
      const token = a.token!;
      const admin = await c.backend();
      expect(await admin.admin!.forceLeader(election, 'a')).toEqual({ candidateId: 'a', token });
      const forcedAt = performance.now();
      // Renewals go on in the same term: nothing was revoked (a revoked term's renewal is refused).
      const granted = () => backend.delivered('renew').filter((call) => call.sentAt > forcedAt && grantOf(call) !== null);
      await waitFor(() => granted().length > 0, 'a renewal granted after the force', LONG_LEASE_MS);
      expect([a.isLeader(), a.token]).toEqual([true, token]);
      expect(await admin.getLeader(election)).toMatchObject({ candidateId: 'a', token });
    });

    test('clearLeader starts a new election with a greater token', async () => {
      const c = ctx();
      const election = c.election('clear');
      const a = await c.elector(election, 'a');
      const b = await c.elector(election, 'b');
      await a.start();
      await b.start();
      const first = await waitFor(() => [a, b].find((e) => e.isLeader()), 'a leader');
      const firstToken = first.token!;
      const admin = await c.backend();
      await admin.admin!.clearLeader(election);
      await waitFor(
        () => [a, b].some((e) => e.isLeader() && e.token! > firstToken),
        'a new term after clearLeader',
        c.leaseMs * 10,
      );
      const leader = await admin.getLeader(election);
      expect(leader).not.toBeNull();
      expect(leader!.token).toBeGreaterThan(firstToken);
    });

    const listTest = listCandidates ? test : test.skip;
    listTest(
      listCandidates
        ? 'listCandidates names every candidate, the leader first'
        : 'listCandidates (skipped: the backend has no candidates part)',
      async () => {
        const c = ctx();
        const election = c.election('list');
        const electors = await Promise.all(['a', 'b', 'c'].map((id) => c.elector(election, id)));
        for (const e of electors) await e.start();
        const leader = await waitFor(() => electors.find((e) => e.isLeader()), 'a leader');
        const admin = await c.backend();
        const ids = await waitFor(async () => {
          const list = await admin.candidates!.list(election);
          return list.length === 3 ? list : null;
        }, 'three candidates listed');
        expect(ids[0]).toBe(leader.candidateId);
        expect([...ids].sort()).toEqual(['a', 'b', 'c']);
        await electors[1]!.stop();
        await waitFor(async () => !(await admin.candidates!.list(election)).includes('b'), 'b to leave the list');
      },
    );

    if (!listCandidates) {
      test('the candidates part is absent, from the backend and from a wrapper', async () => {
        const c = ctx();
        const admin = await c.backend();
        // Not there, from the backend as from a wrapper: callers test the part and never need to try it.
        expect(admin.inner.candidates).toBeUndefined();
        expect(admin.candidates).toBeUndefined();
      });
    }
  });
}
