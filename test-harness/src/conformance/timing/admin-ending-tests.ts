import { performance } from 'node:perf_hooks';
import { expect, test } from '@jest/globals';
import type { RevokeReason } from '@conclave/core';
import { candidateOfNullable } from '@conclave/core/spi';
import { checkSplitBrain } from '../../history/split-brain-checker';
import { waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';
import { adminEndings } from './term-endings';

/** An admin call ends the old leader's term before a new one starts: never two leaders at once. */
export function addAdminEndingTests(ctx: () => SuiteContext): void {
  // forceLeader/clearLeader revoke the lease at once; its holder learns at its next renewal,
  // and no new term starts before the revoked lease could have ended on the server, which is
  // after the old leader's deadline. So the two terms never overlap.
  test.each(adminEndings)('%s ends the old leader\'s term: at no point do two Electors report leading', async (_name, act) => {
    const c = ctx();
    const election = c.election('admin-end');
    const aBackend = await c.backend();
    const a = await c.elector(election, 'a', { backend: aBackend });
    const b = await c.elector(election, 'b');
    await a.start();
    await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
    const aToken = a.token!;
    await b.start();
    await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', c.leaseMs * 10);
    const both: string[] = [];
    let samples = 0;
    const check = () => {
      samples++;
      if (a.isLeader() && b.isLeader()) both.push(`a ${a.token}, b ${b.token}`);
    };
    const subs = [a, b].map((e) => e.state$.subscribe(check));
    const sampler = setInterval(check, 1);
    let revokedAt: number | null = null;
    let reason: RevokeReason | null = null;
    a.revoked$.subscribe((e) => {
      if (e.token !== aToken) return;
      revokedAt = performance.now();
      reason = e.reason;
    });
    const admin = await c.backend();
    // a hears back from the server a quarter of a lease late (its deadline still counts from
    // the send): had the next term started at once, b would lead before a learns its term ended.
    aBackend.delayReplies(Math.floor(c.leaseMs / 4), ['renew']);
    let actedAt = Infinity;
    let newTermAt = Infinity;
    // The old lease ends at most one lease after the call; the new term starts then, plus the
    // time a follower takes to look again (a poll, at most retryMs) and a slow machine's slack.
    const bound = 2 * c.leaseMs + 2000;
    try {
      check();
      actedAt = performance.now();
      await act(admin, election);
      await waitFor(() => revokedAt !== null, 'a\'s term to end', bound);
      await waitFor(() => [a, b].some((e) => e.isLeader() && e.token! > aToken), 'a new term', bound);
      newTermAt = performance.now();
      check();
    } finally {
      clearInterval(sampler);
      subs.forEach((s) => s.unsubscribe());
    }
    expect(both).toEqual([]);
    expect(samples).toBeGreaterThan(10);
    expect(reason).toBe('lease-lost');
    // What ended the term was a refused renewal (a hint may have made a renew early).
    const renewals = aBackend.calls.filter(
      (call) => call.method === 'renew' && call.deliveredAt !== undefined && (call.args[0] as { token: number }).token === aToken,
    );
    const refusal = renewals.filter((call) => call.deliveredAt! <= revokedAt!).pop();
    expect((refusal?.result as { held?: boolean } | undefined)?.held).toBe(false);
    expect(revokedAt! - refusal!.deliveredAt!).toBeLessThan(c.leaseMs / 10);
    expect(newTermAt - actedAt).toBeLessThan(bound);
    expect(checkSplitBrain(c.history.events).tokenRegressions).toEqual([]);
    expect(checkSplitBrain(c.history.events).overlaps).toEqual([]);
  });
}
