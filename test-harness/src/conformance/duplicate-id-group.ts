import { describe, expect, test } from '@jest/globals';
import type { Elector } from '@conclave/core';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/**
 * Candidate ids are chosen by users and get duplicated (a pod restarted under its old name while
 * the old one hangs). Two Electors with one id must never share a term.
 */
export function describeDuplicateIds(ctx: () => SuiteContext): void {
  describe('duplicate candidate ids', () => {
    test('two Electors with the same candidate id never lead at once, and the follower reports the duplicate', async () => {
      const c = ctx();
      const election = c.election('dup');
      const first = await c.elector(election, 'same-id');
      await first.start();
      await waitFor(() => first.isLeader(), 'the first instance to lead');
      const second = await c.elector(election, 'same-id');
      const overlaps = watchOverlap([first, second]);
      try {
        await second.start();
        // The second campaigns for a whole lease and more: it must stay a follower, told apart.
        await waitFor(() => second.health().problem?.startsWith('duplicate candidate id') === true, 'the duplicate reported', c.leaseMs * 4);
        await new Promise((resolve) => setTimeout(resolve, c.leaseMs * 1.5));
        expect(first.isLeader()).toBe(true);
        expect(second.isLeader()).toBe(false);
        expect(second.state.leaderId).toBe('same-id');
        expect(second.health().ok).toBe(false);
        const admin = await c.backend();
        expect(await admin.getLeader(election)).toMatchObject({ candidateId: 'same-id', token: first.token });

        // A hand-over between the two is a new term with a greater token.
        const firstToken = first.token!;
        await first.stop();
        await waitFor(() => second.isLeader(), 'the second instance to take over', c.leaseMs * 4);
        expect(second.token!).toBeGreaterThan(firstToken);
        expect(second.health().ok).toBe(true);
      } finally {
        overlaps.stop();
      }
      expect(overlaps.seen).toEqual([]);
    });

    test('forceLeader with a candidate id is taken by exactly one of its instances', async () => {
      const c = ctx();
      const election = c.election('dup-force');
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const b1 = await c.elector(election, 'b');
      const b2 = await c.elector(election, 'b');
      // The two instances of b never lead at once (a's overlap with the forced term is the
      // admin operation's own matter, covered with the admin operations).
      const overlaps = watchOverlap([b1, b2]);
      try {
        await b1.start();
        await b2.start();
        const admin = await c.backend();
        const forced = await admin.admin!.forceLeader(election, 'b');
        await waitFor(() => b1.isLeader() || b2.isLeader(), 'an instance of b to lead', c.leaseMs * 10);
        const leader = b1.isLeader() ? b1 : b2;
        expect(leader.token).toBe(forced.token);
        await new Promise((resolve) => setTimeout(resolve, c.leaseMs));
        expect([a, b1, b2].filter((e) => e.isLeader())).toEqual([leader]);
        expect(leader.token).toBe(forced.token);
      } finally {
        overlaps.stop();
      }
      expect(overlaps.seen).toEqual([]);
    });
  });
}

/** Polls `isLeader()` of every Elector every few ms and records any instant two lead at once. */
function watchOverlap(electors: Elector[]): { seen: string[]; stop: () => void } {
  const seen: string[] = [];
  const timer = setInterval(() => {
    const leading = electors.filter((e) => e.isLeader());
    if (leading.length > 1) seen.push(leading.map((e) => `${e.instanceId}@${e.token}`).join(' + '));
  }, 2);
  return { seen, stop: () => clearInterval(timer) };
}
