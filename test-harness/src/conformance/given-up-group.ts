import { performance } from 'node:perf_hooks';
import { describe, expect, test } from '@jest/globals';
import { ConclaveError, isConclaveError } from '@conclave/core';
import type { CampaignResult, LeaderInfo } from '@conclave/core/spi';
import { leaderOf } from '../campaign-result';
import type { SuiteContext } from './suite-context';

/** When the caller gives up on the first call: with it, after a turn of the loop, a little later. */
const GIVE_UP_AT = [
  ['at once', () => Promise.resolve()],
  ['after a turn', () => new Promise<void>((resolve) => setImmediate(resolve))],
  ['after 5 ms', () => new Promise<void>((resolve) => setTimeout(resolve, 5))],
] as const;

/** A request's deadline and signal, as the Elector sends them. */
function timing(leaseMs: number, controller = new AbortController()) {
  return { signal: controller.signal, deadlineMs: performance.now() + leaseMs };
}

function giveUp(controller: AbortController): void {
  controller.abort(new ConclaveError('BACKEND_UNAVAILABLE', 'the caller gave up'));
}

/** A call given up on may answer, or fail as unreachable; nothing else. */
function expectAnsweredOrUnavailable(outcome: PromiseSettledResult<unknown>): void {
  if (outcome.status === 'rejected') {
    expect(isConclaveError(outcome.reason) ? outcome.reason.code : outcome.reason).toBe('BACKEND_UNAVAILABLE');
  }
}

/**
 * The SPI's rule for calls the core gives up on (see ElectionBackend, "Calls the core gives up
 * on"): the core aborts a call's signal and makes the next call for the same instance id at once,
 * while the first may still take effect. Checked on the backend directly.
 */
export function describeGivenUpCalls(ctx: () => SuiteContext): void {
  describe('a call the core gave up on, then the next one', () => {
    test.each(GIVE_UP_AT)(
      'a campaign given up on %s, then another at once: one term, one token, and a release ends it',
      async (_when, later) => {
        const c = ctx();
        const election = c.election('given-up');
        const a = await c.backend();
        const controller = new AbortController();
        const first = a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs, controller) });
        await later();
        giveUp(controller);
        const second = a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) });
        const [early, next] = await Promise.allSettled([first, second]);

        expectAnsweredOrUnavailable(early);
        expect(next.status).toBe('fulfilled');
        const { token } = leaderOf((next as PromiseFulfilledResult<CampaignResult>).value);
        // Anything the first still does on its own comes now, not after a lease.
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (early.status === 'fulfilled') {
          // The first, if it took the lease, took this same term. Never two live terms: where
          // the two overlapped too closely to tell (Redlock), the second's token replaces the
          // first's, which is lower and no longer renews.
          const earlier = leaderOf(early.value).token;
          if (earlier !== token) {
            expect(earlier).toBeLessThan(token);
            const renewed = await a.renew({ election, candidateId: 'a', token: earlier, leaseMs: c.leaseMs });
            expect(renewed.held).toBe(false);
          }
        }
        expect(await a.getLeader(election)).toMatchObject({ candidateId: 'a', token });
        expect((await a.renew({ election, candidateId: 'a', token, leaseMs: c.leaseMs })).held).toBe(true);
        // Campaigning again, once both have settled, goes on in that term.
        const again = await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) });
        expect(leaderOf(again).token).toBe(token);

        await a.release({ election, candidateId: 'a', token, ...timing(c.leaseMs) });
        expect(await a.getLeader(election)).toBeNull();
        // The next term, anyone's, has a greater token.
        const b = await c.backend();
        const other = await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs, ...timing(c.leaseMs) });
        expect(leaderOf(other).token).toBeGreaterThan(token);
        await b.release({ election, candidateId: 'b', token: leaderOf(other).token });
      },
    );

    test('a campaign given up on before it is made fails as unreachable having changed nothing, or is answered', async () => {
      const c = ctx();
      const election = c.election('given-up-before');
      const a = await c.backend();
      const controller = new AbortController();
      giveUp(controller);
      const [outcome] = await Promise.allSettled([
        a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs, controller) }),
      ]);
      expectAnsweredOrUnavailable(outcome);
      if (outcome.status === 'rejected') expect(await a.getLeader(election)).toBeNull();
      const lead = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) }));
      if (outcome.status === 'fulfilled') expect(leaderOf(outcome.value).token).toBe(lead.token);
      await a.release({ election, candidateId: 'a', token: lead.token });
      expect(await a.getLeader(election)).toBeNull();
    });

    test.each(GIVE_UP_AT)(
      'a release given up on %s, then a campaign at once: tokens never go down, and a release after it leaves nobody leading',
      async (_when, later) => {
        const c = ctx();
        const election = c.election('given-up-release');
        const a = await c.backend();
        const lead = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) }));
        const controller = new AbortController();
        const release = a.release({ election, candidateId: 'a', token: lead.token, ...timing(c.leaseMs, controller) });
        await later();
        giveUp(controller);
        const campaign = a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) });
        const [released, next] = await Promise.allSettled([release, campaign]);

        expectAnsweredOrUnavailable(released);
        expect(next.status).toBe('fulfilled');
        const answer = (next as PromiseFulfilledResult<CampaignResult>).value;
        let token = lead.token;
        let now: LeaderInfo | null;
        if (answer.role === 'leader') {
          // The same term if the release had not landed yet, else a new one with a greater token.
          token = answer.token;
          expect(token).toBeGreaterThanOrEqual(lead.token);
          // A release that landed after it may have ended that term (only when it was the same term).
          now = await a.getLeader(election);
          if (now === null) expect(token).toBe(lead.token);
          else expect(now).toMatchObject({ candidateId: 'a', token });
        } else {
          // The release landed between the campaign's write (which joined the term) and its
          // read-back (MySQL reads the outcome in a second statement): the campaign then reports
          // what is so, nobody leads.
          expect(answer.leaderId).toBeNull();
          now = await a.getLeader(election);
          expect(now).toBeNull();
        }
        const again = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, ...timing(c.leaseMs) }));
        expect(again.token).toBeGreaterThanOrEqual(token);
        if (now !== null) expect(again.token).toBe(token);

        await a.release({ election, candidateId: 'a', token: again.token, ...timing(c.leaseMs) });
        expect(await a.getLeader(election)).toBeNull();
      },
    );
  });
}
