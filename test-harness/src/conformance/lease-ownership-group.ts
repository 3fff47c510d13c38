import { describe, expect, test } from '@jest/globals';
import { leaderOf } from '../campaign-result';
import type { SuiteContext } from './suite-context';

/** The SPI's ownership rules, checked on the backend directly: only the holder renews or releases. */
export function describeLeaseOwnership(ctx: () => SuiteContext): void {
  describe('lease ownership', () => {
    test('the holder campaigning again keeps its term and token', async () => {
      const c = ctx();
      const election = c.election('same-term');
      const backend = await c.backend();
      const first = await backend.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      expect(first.role).toBe('leader');
      const again = await backend.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      expect(again).toMatchObject({ role: 'leader', token: first.role === 'leader' ? first.token : -1 });
      await backend.release({ election, candidateId: 'a' });
    });

    test('a follower is told who leads', async () => {
      const c = ctx();
      const election = c.election('follower');
      const a = await c.backend();
      const b = await c.backend();
      const lead = await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      const follow = await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs });
      const { token } = leaderOf(lead);
      expect(follow.role).toBe('follower');
      if (follow.role !== 'follower') return;
      expect(follow.leaderId).toBe('a');
      // The leader's token, when the backend reports one (the SPI allows null).
      expect(follow.token === null || follow.token === token).toBe(true);
      await b.release({ election, candidateId: 'b' });
      await a.release({ election, candidateId: 'a' });
    });

    test('another candidate cannot renew or release the leader\'s lease', async () => {
      const c = ctx();
      const election = c.election('foreign');
      const a = await c.backend();
      const b = await c.backend();
      const lead = await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      if (lead.role !== 'leader') throw new Error('a should lead an empty election');
      await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs });

      const foreignRenew = await b.renew({ election, candidateId: 'b', token: lead.token, leaseMs: c.leaseMs });
      expect(foreignRenew.held).toBe(false);
      await b.release({ election, candidateId: 'b', token: lead.token });
      await b.release({ election, candidateId: 'b' });
      expect(await b.getLeader(election)).toMatchObject({ candidateId: 'a', token: lead.token });

      // The holder with a stale token is refused too, and a stale-token release changes nothing.
      const staleRenew = await a.renew({ election, candidateId: 'a', token: lead.token - 1, leaseMs: c.leaseMs });
      expect(staleRenew.held).toBe(false);
      await a.release({ election, candidateId: 'a', token: lead.token - 1 });
      expect(await a.getLeader(election)).toMatchObject({ candidateId: 'a', token: lead.token });

      const ownRenew = await a.renew({ election, candidateId: 'a', token: lead.token, leaseMs: c.leaseMs });
      expect(ownRenew.held).toBe(true);
      await a.release({ election, candidateId: 'a', token: lead.token });
      await b.release({ election, candidateId: 'b' });
    });

    test('renew never creates a lease that does not exist', async () => {
      const c = ctx();
      const election = c.election('no-lease');
      const a = await c.backend();
      const result = await a.renew({ election, candidateId: 'a', token: 1, leaseMs: c.leaseMs });
      expect(result.held).toBe(false);
      expect(await a.getLeader(election)).toBeNull();
    });

    test('release is idempotent', async () => {
      const c = ctx();
      const election = c.election('release-twice');
      const a = await c.backend();
      await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      await a.release({ election, candidateId: 'a' });
      await a.release({ election, candidateId: 'a' });
      expect(await a.getLeader(election)).toBeNull();
    });

    test('a lease that is not renewed lapses on the server, and the next term has a greater token', async () => {
      const c = ctx();
      const election = c.election('lapse');
      const a = await c.backend();
      const b = await c.backend();
      const leaseMs = c.leaseMs;
      const lead = await a.campaign({ election, candidateId: 'a', leaseMs });
      if (lead.role !== 'leader') throw new Error('a should lead an empty election');
      await c.freeze(a);
      let next = await b.campaign({ election, candidateId: 'b', leaseMs });
      const until = Date.now() + leaseMs * 10;
      while (next.role !== 'leader' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        next = await b.campaign({ election, candidateId: 'b', leaseMs });
      }
      expect(leaderOf(next).token).toBeGreaterThan(lead.token);
      await b.release({ election, candidateId: 'b' });
    });
  });
}
