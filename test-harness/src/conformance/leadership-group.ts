import { describe, expect, test } from '@jest/globals';
import { firstValueFrom } from 'rxjs';
import type { Elector } from '@conclave/core';
import { checkSplitBrain } from '../history/split-brain-checker';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

const leaders = (electors: Elector[]) => electors.filter((e) => e.isLeader());
const idAndToken = (e: Elector) => `${e.candidateId} (token ${e.token})`;

/** The next of `electors` to be elected, with its token. */
export function nextElected(electors: Elector[]): Promise<{ elector: Elector; token: number }> {
  return new Promise((resolve) => {
    const subscriptions = electors.map((elector) =>
      elector.elected$.subscribe((event) => {
        subscriptions.forEach((s) => s.unsubscribe());
        resolve({ elector, token: event.token });
      }),
    );
  });
}

/** Exactly one leader, hand-over on release, a frozen leader replaced only after it stopped leading. */
export function describeLeadership(ctx: () => SuiteContext): void {
  describe('leadership', () => {
    test('exactly one of three candidates leads', async () => {
      const c = ctx();
      const election = c.election('one');
      const electors = await Promise.all(['a', 'b', 'c'].map((id) => c.elector(election, id)));
      await Promise.all(electors.map((e) => e.start()));
      await waitFor(() => leaders(electors).length === 1, 'one leader');
      // Hold for a few renewals: still exactly one, and the same one.
      const leader = leaders(electors)[0]!;
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, c.leaseMs / 5));
        // Compared by id and token: a failure prints them (Jest cannot print an Elector).
        expect({ hold: i, leading: leaders(electors).map(idAndToken) }).toEqual({ hold: i, leading: [idAndToken(leader)] });
      }
      for (const e of electors) {
        if (e !== leader) expect(e.state.leaderId).toBe(leader.candidateId);
      }
      expect(checkSplitBrain(c.history.events).overlaps).toEqual([]);
    });

    test('a released lease is handed over to another candidate with a greater token', async () => {
      const c = ctx();
      const election = c.election('handover');
      const electors = await Promise.all(['a', 'b', 'c'].map((id) => c.elector(election, id)));
      await Promise.all(electors.map((e) => e.start()));
      const first = await waitFor(() => leaders(electors)[0], 'a first leader');
      const firstToken = first.token!;
      const next = nextElected(electors.filter((e) => e !== first));
      await first.stop();
      const { elector: second, token } = await next;
      expect(first.isLeader()).toBe(false);
      expect(token).toBeGreaterThan(firstToken);
      expect(second.token).toBe(token);
      expect(leaders(electors).map(idAndToken)).toEqual([idAndToken(second)]);
      const report = checkSplitBrain(c.history.events);
      expect(report.overlaps).toEqual([]);
      expect(report.tokenRegressions).toEqual([]);
    });

    test('tokens strictly increase across many terms', async () => {
      const c = ctx();
      const election = c.election('tokens');
      const a = await c.elector(election, 'a');
      const b = await c.elector(election, 'b');
      await a.start();
      await b.start();
      const tokens: number[] = [];
      for (let round = 0; round < 6; round++) {
        const leader = await waitFor(() => leaders([a, b])[0], `a leader in round ${round}`);
        tokens.push(leader.token!);
        await leader.stepDown();
        await waitFor(() => leaders([a, b]).some((e) => e.token !== null && e.token > tokens[tokens.length - 1]!), `a new term after round ${round}`);
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
      expect(checkSplitBrain(c.history.events).tokenRegressions).toEqual([]);
    });

    test('a frozen leader is no longer leader when another is elected after its lease', async () => {
      const c = ctx();
      const election = c.election('frozen');
      const frozenBackend = await c.backend();
      const frozen = await c.elector(election, 'frozen', { backend: frozenBackend });
      await frozen.start();
      await waitFor(() => frozen.isLeader(), 'the first candidate to lead');
      const oldToken = frozen.token!;
      const other = await c.elector(election, 'other');
      await other.start();
      expect(other.isLeader()).toBe(false);

      let frozenLeadingWhenOtherElected: boolean | null = null;
      other.elected$.subscribe(() => {
        frozenLeadingWhenOtherElected = frozen.isLeader();
      });
      await c.freeze(frozenBackend);
      await waitFor(() => other.isLeader(), 'the other candidate to take over', c.leaseMs * 10);
      expect(frozenLeadingWhenOtherElected).toBe(false);
      expect(frozen.isLeader()).toBe(false);
      expect(frozen.state.reason).toBe('lease-expired');
      expect(other.token!).toBeGreaterThan(oldToken);
      const report = checkSplitBrain(c.history.events);
      expect(report.overlaps).toEqual([]);
    });

    test('isLeader() turns false at the deadline even when the backend never answers', async () => {
      const c = ctx();
      const election = c.election('hang');
      const backend = await c.backend();
      const e = await c.elector(election, 'hung', { backend });
      await e.start();
      await waitFor(() => e.isLeader(), 'leadership');
      const revoked = firstValueFrom(e.revoked$);
      backend.hang();
      // The deadline counts from the last renewal sent before the hang, so one lease after the
      // hang isLeader() must be false — however late timers fire on a loaded machine.
      await new Promise((r) => setTimeout(r, c.leaseMs));
      expect(e.isLeader()).toBe(false);
      const ev = await revoked;
      expect(ev.reason).toBe('lease-expired');
      backend.unhang();
      await waitFor(() => e.isLeader(), 'leadership again once the backend answers', c.leaseMs * 10);
      expect(e.token!).toBeGreaterThan(ev.token);
    });
  });
}
