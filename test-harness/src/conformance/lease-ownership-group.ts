import { performance } from 'node:perf_hooks';
import { describe, expect, test } from '@jest/globals';
import { leaderOf } from '../campaign-result';
import type { SuiteContext } from './suite-context';
import { LONG_LEASE_MS } from './timing/lease-grants';

/**
 * The lease of tests whose steps all run while the first lease holds (none waits one out): long
 * enough that a few round trips on a loaded machine cannot outlast it, as 1.5 s did.
 */
const HELD_MS = LONG_LEASE_MS;

/** The SPI's ownership rules, checked on the backend directly: only the holder renews or releases. */
export function describeLeaseOwnership(ctx: () => SuiteContext): void {
  describe('lease ownership', () => {
    test('the holder campaigning again keeps its term and token', async () => {
      const c = ctx();
      const election = c.election('same-term');
      const backend = await c.backend();
      const first = await backend.campaign({ election, candidateId: 'a', leaseMs: HELD_MS });
      expect(first.role).toBe('leader');
      const again = await backend.campaign({ election, candidateId: 'a', leaseMs: HELD_MS });
      expect(again).toMatchObject({ role: 'leader', token: first.role === 'leader' ? first.token : -1 });
      await backend.release({ election, candidateId: 'a' });
    });

    test('a follower is told who leads', async () => {
      const c = ctx();
      const election = c.election('follower');
      const a = await c.backend();
      const b = await c.backend();
      const lead = await a.campaign({ election, candidateId: 'a', leaseMs: HELD_MS });
      const follow = await b.campaign({ election, candidateId: 'b', leaseMs: HELD_MS });
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
      const lead = await a.campaign({ election, candidateId: 'a', leaseMs: HELD_MS });
      if (lead.role !== 'leader') throw new Error('a should lead an empty election');
      await b.campaign({ election, candidateId: 'b', leaseMs: HELD_MS });

      const foreignRenew = await b.renew({ election, candidateId: 'b', token: lead.token, leaseMs: HELD_MS });
      expect(foreignRenew.held).toBe(false);
      await b.release({ election, candidateId: 'b', token: lead.token });
      await b.release({ election, candidateId: 'b' });
      expect(await b.getLeader(election)).toMatchObject({ candidateId: 'a', token: lead.token });

      // The holder with a stale token is refused too, and a stale-token release changes nothing.
      const staleRenew = await a.renew({ election, candidateId: 'a', token: lead.token - 1, leaseMs: HELD_MS });
      expect(staleRenew.held).toBe(false);
      await a.release({ election, candidateId: 'a', token: lead.token - 1 });
      expect(await a.getLeader(election)).toMatchObject({ candidateId: 'a', token: lead.token });

      const ownRenew = await a.renew({ election, candidateId: 'a', token: lead.token, leaseMs: HELD_MS });
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

    test('a lease that is not renewed lapses on the server within the lease it granted (or the time the backend shows a dead holder), and the next term has a greater token', async () => {
      const c = ctx();
      const leaseMs = c.leaseMs;
      // The last grant is a campaign's in one election, a renewal's in another (both at once).
      const lapse = async (lastGrant: 'campaign' | 'renew') => {
        const election = c.election(`lapse-${lastGrant}`);
        const a = await c.backend();
        const b = await c.backend();
        let sentAt = performance.now();
        const lead = await a.campaign({ election, candidateId: 'a', leaseMs });
        if (lead.role !== 'leader') throw new Error('a should lead an empty election');
        let grantedMs = lead.leaseMs;
        if (lastGrant === 'renew') {
          sentAt = performance.now();
          const renewed = await a.renew({ election, candidateId: 'a', token: lead.token, leaseMs });
          if (!renewed.held) throw new Error('a should renew its own lease');
          grantedMs = renewed.leaseMs;
        }
        await c.freeze(a);
        // When each of b's refused campaigns was sent, after a's last grant was.
        const refusedSentAfterMs: number[] = [];
        const campaignB = async () => {
          const at = performance.now();
          const result = await b.campaign({ election, candidateId: 'b', leaseMs });
          if (result.role !== 'leader') refusedSentAfterMs.push(Math.round(at - sentAt));
          return result;
        };
        let next = await campaignB();
        const until = Date.now() + leaseMs * 10;
        while (next.role !== 'leader' && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 50));
          next = await campaignB();
        }
        expect(leaderOf(next).token).toBeGreaterThan(lead.token);
        await b.release({ election, candidateId: 'b' });
        // No campaign sent later than this after a's last grant was sent is refused: the lease
        // granted (never more than asked), or, where the backend shows a dead holder longer (a
        // ZooKeeper session), that; plus half a lease for a loaded machine. A server that keeps a
        // lease twice as long refuses campaigns sent a whole lease past it.
        const boundMs = Math.max(Math.min(grantedMs, leaseMs), a.staleLeaderMs ?? 0) + leaseMs / 2;
        return { lastGrant, boundMs, refusedSentAfterMs: refusedSentAfterMs.filter((ms) => ms > boundMs) };
      };
      const results = await Promise.all([lapse('campaign'), lapse('renew')]);
      expect(results).toEqual(results.map((r) => ({ ...r, refusedSentAfterMs: [] })));
    });
  });
}
