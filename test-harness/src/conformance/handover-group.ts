import { performance } from 'node:perf_hooks';
import { describe, expect, test } from '@jest/globals';
import type { Elector } from '@conclave/core';
import { candidateOfNullable } from '@conclave/core/spi';
import { delay, waitFor } from '../wait-for';
import type { ControlledBackend } from '../controlled-backend';
import type { SuiteContext } from './suite-context';

/** How long a's task keeps working after its signal aborted (a flush), ms. */
const FLUSH_MS = 300;

/** The voluntary ends of a term, which await its work before they release. */
const ENDS: Array<[string, (a: Elector) => Promise<void> | void]> = [
  ['stop()', (a) => a.stop()],
  ['stepDown()', (a) => a.stepDown()],
  ['pause()', (a) => a.pause()],
];

/** Fails the test (at its end) if `a` and `b` ever both say they lead. */
function watchForTwoLeaders(a: Elector, b: Elector): { both: string[] } {
  const seen = { both: [] as string[] };
  a.isLeader$.subscribe((leading) => {
    if (leading && b.isLeader()) seen.both.push(`a elected while b leads (token ${b.token})`);
  });
  b.isLeader$.subscribe((leading) => {
    if (leading && a.isLeader()) seen.both.push(`b elected while a leads (token ${a.token})`);
  });
  return seen;
}

/** a leads with b campaigning beside it, b seeing a lead. */
async function aLeadsBFollows(
  c: SuiteContext,
  label: string,
): Promise<{ a: Elector; b: Elector; election: string; aBackend: ControlledBackend }> {
  const election = c.election(label);
  const aBackend = await c.backend();
  const a = await c.elector(election, 'a', { backend: aBackend });
  const b = await c.elector(election, 'b');
  await a.start();
  await waitFor(() => a.isLeader(), 'a to lead');
  await b.start();
  await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', c.leaseMs * 10);
  return { a, b, election, aBackend };
}

/**
 * A term given up on purpose hands over in order: a's signal aborts, a's whileLeader task
 * settles, then the lease is released and b's task starts — never beside a's.
 */
export function describeHandover(ctx: () => SuiteContext): void {
  describe('hand-over of whileLeader work', () => {
    test.each(ENDS)("after %s, the next leader's task starts only once the last one has settled", async (name, end) => {
      const c = ctx();
      const { a, b, election } = await aLeadsBFollows(c, 'handover');
      let abortedAt: number | null = null;
      let aSettledAt: number | null = null;
      let bStartedAt: number | null = null;
      let aStarted = false;
      a.whileLeader(async ({ signal }) => {
        aStarted = true;
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        abortedAt = performance.now();
        await delay(FLUSH_MS);
        aSettledAt = performance.now();
      });
      b.whileLeader(() => {
        bStartedAt ??= performance.now();
      });
      const leaders = watchForTwoLeaders(a, b);
      await waitFor(() => aStarted, "a's task to start");
      await end(a);
      const endReturnedAt = performance.now();
      if (name !== 'pause()') {
        // stop() and stepDown() resolve once released, so after the task settled; the lease was
        // released, not left to expire (it had more than FLUSH_MS to run when the flush began).
        expect(aSettledAt).not.toBeNull();
        expect(endReturnedAt).toBeGreaterThanOrEqual(aSettledAt!);
        expect(candidateOfNullable((await (await c.backend()).getLeader(election))?.candidateId ?? null)).not.toBe('a');
      }
      await waitFor(() => bStartedAt !== null, "b's task to start", c.leaseMs * 10);
      expect(abortedAt).not.toBeNull();
      expect(aSettledAt).not.toBeNull();
      expect(bStartedAt!).toBeGreaterThanOrEqual(aSettledAt!);
      expect(aSettledAt! - abortedAt!).toBeGreaterThanOrEqual(FLUSH_MS - 5);
      expect(leaders.both).toEqual([]);
    });

    test.each(ENDS.slice(0, 2))('after %s, a task that ignores its signal holds the election no longer than the lease', async (_name, end) => {
      const c = ctx();
      const { a, b, aBackend } = await aLeadsBFollows(c, 'ignored');
      let finish!: () => void;
      const ignoring = new Promise<void>((resolve) => (finish = resolve));
      let bStartedAt: number | null = null;
      let aStarted = false;
      a.whileLeader(() => {
        aStarted = true;
        return ignoring;
      });
      b.whileLeader(() => {
        bStartedAt ??= performance.now();
      });
      const leaders = watchForTwoLeaders(a, b);
      try {
        await waitFor(() => aStarted, "a's task to start");
        // a's deadline on its own clock: isLeader() would have turned false there; the server
        // lets the lease go at most safetyMarginMs later.
        const remaining = a.health().leaseRemainingMs!;
        const aDeadline = performance.now() + remaining;
        const leaseEnd = aDeadline + a.options.safetyMarginMs;
        // The margin, derived: a polling b looks every retryMs (sooner when the release is pushed),
        // plus a tenth of a lease for its campaign's round trip and the timers' lateness.
        const margin = b.options.retryMs + c.leaseMs / 10;
        const endCalledAt = performance.now();
        await end(a);
        // a waited for its task until its deadline, not past it, then released: the release was
        // sent by then (plus a tenth of a lease for the timer's lateness). When stop() returns
        // is no measure of it: that includes the release's round trip.
        const release = aBackend.calls.find((call) => call.method === 'release' && call.sentAt >= endCalledAt);
        expect(release).toBeDefined();
        expect(release!.sentAt).toBeLessThanOrEqual(aDeadline + c.leaseMs / 10);
        await waitFor(() => bStartedAt !== null, "b's task to start", c.leaseMs * 10);
        expect(bStartedAt!).toBeLessThanOrEqual(leaseEnd + margin);
        expect(leaders.both).toEqual([]);
      } finally {
        finish();
      }
    });
  });
}
