import { performance } from 'node:perf_hooks';
import { expect, test } from '@jest/globals';
import { isConclaveError, type Elector, type RevokeReason } from '@conclave/core';
import { candidateOfNullable } from '@conclave/core/spi';
import { waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';
import { allowedDeadline } from './lease-grants';
import { ENDINGS } from './term-endings';

/** Resolves with the signal of the next whileLeader term of `elector`. */
function nextTermSignal(elector: Elector): Promise<{ token: number; signal: AbortSignal }> {
  return new Promise((resolve) => {
    const unregister = elector.whileLeader(({ token, signal }) => {
      unregister();
      resolve({ token, signal });
    });
  });
}

/** Whichever way a term ends, whileLeader's signal aborts with it, before anyone leads next. */
export function addSignalAbortTests(ctx: () => SuiteContext): void {
  test.each(ENDINGS.map((e) => [e.name, e] as const))(
    'whileLeader\'s signal aborts when the term ends by %s',
    async (_name, ending) => {
      const c = ctx();
      const election = c.election('abort');
      const aBackend = await c.backend();
      const a = await c.elector(election, 'a', { backend: aBackend });
      const term = nextTermSignal(a);
      await a.start();
      const { token, signal } = await term;
      expect(a.token).toBe(token);
      const b = await c.elector(election, 'b');
      await b.start();
      await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', c.leaseMs * 10);

      let abortedAtRevoke: boolean | null = null;
      let revokedFor: RevokeReason | null = null;
      let abortedWhenNextTermStarted: boolean | null = null;
      let leadingAtAbort: boolean | null = null;
      a.revoked$.subscribe((e) => {
        if (e.token !== token) return;
        abortedAtRevoke = signal.aborted;
        revokedFor = e.reason;
      });
      for (const e of [a, b]) {
        e.elected$.subscribe((ev) => {
          if (ev.token > token) abortedWhenNextTermStarted ??= signal.aborted;
        });
      }
      let abortBeforeDeadline: boolean | null = null;
      signal.addEventListener('abort', () => {
        leadingAtAbort = a.isLeader();
        abortBeforeDeadline = performance.now() < allowedDeadline(a, aBackend);
      });

      await ending.end({ c, a, aBackend, election });
      if (ending.atOnce) expect(signal.aborted).toBe(true);
      await waitFor(() => signal.aborted, 'the signal to abort', c.leaseMs * 10);
      expect(revokedFor).toBe(ending.reason);
      expect(abortedAtRevoke).toBe(true);
      expect(leadingAtAbort).toBe(false);
      // Every ending but the deadline itself aborts while the lease still runs.
      if (ending.reason !== 'lease-expired') expect(abortBeforeDeadline).toBe(true);
      expect(isConclaveError(signal.reason, 'LEASE_LOST')).toBe(true);
      // Whoever leads next, a's signal had aborted by then.
      await waitFor(() => abortedWhenNextTermStarted !== null, 'a next term', c.leaseMs * 20);
      expect(abortedWhenNextTermStarted).toBe(true);
    },
  );
}
