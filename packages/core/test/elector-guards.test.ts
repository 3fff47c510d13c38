import { describe, expect, test } from '@jest/globals';
import { Elector, MemoryBackend } from '@conclave/core';
import {
  forwardBackend,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core/spi';
import { ControlledBackend, delay, waitFor } from '@conclave/test-harness';

// Rules of the Elector that only a pure function's table test covered: here an Elector on a real
// (memory) backend has to keep them, so that a rewrite of the core cannot drop one unnoticed.

/** A backend whose server holds each lease ten times as long as asked, and says it holds what was asked. */
function tenfoldLeases(inner: ElectionBackend): ElectionBackend {
  return forwardBackend(inner, {
    campaign: async (next, request) => {
      const result = (await next({ ...(request as CampaignRequest), leaseMs: (request as CampaignRequest).leaseMs * 10 })) as CampaignResult;
      return result.role === 'leader' ? { ...result, leaseMs: result.leaseMs / 10 } : result;
    },
    renew: async (next, request) => {
      const result = (await next({ ...(request as RenewRequest), leaseMs: (request as RenewRequest).leaseMs * 10 })) as RenewResult;
      return result.held ? { ...result, leaseMs: result.leaseMs / 10 } : result;
    },
  });
}

let n = 0;
const election = () => `guards-${process.pid}-${++n}`;

describe('Elector guards', () => {
  test('health() is not ok for a leader whose event loop was stuck past its lease deadline', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: election(), candidateId: 'a', leaseMs: 400 });
    try {
      await e.start();
      expect(e.health().ok).toBe(true);
      // Busy the thread past the deadline: no timer (the step-down's included) can run meanwhile.
      const until = performance.now() + 450;
      while (performance.now() < until) {
        // spin
      }
      const health = e.health();
      expect(health).toMatchObject({ ok: false, role: 'leader', leaseRemainingMs: 0 });
      expect(health.problem).toMatch(/past its lease deadline/);
    } finally {
      await e.stop();
    }
  });

  test('a term the Elector gave up and the server still holds is not led again: the next term has a greater token', async () => {
    // The server keeps every lease ten times as long as the Elector asks and is told, so the
    // Elector gives its term up long before the server does, and its next campaign finds its own
    // lease still there.
    const backend = new ControlledBackend(tenfoldLeases(new MemoryBackend()));
    const e = new Elector({ backend, election: election(), candidateId: 'a', leaseMs: 1000, retryMs: 100, logger: null });
    const elected: number[] = [];
    let gaveUp = false;
    const subs = [e.elected$.subscribe(({ token }) => elected.push(token)), e.revoked$.subscribe(() => (gaveUp = true))];
    try {
      await e.start();
      expect(elected).toHaveLength(1);
      backend.failCalls();
      // Until the step-down has run (not only until isLeader() turned false on the clock): its
      // release must be refused too, or the term would be gone from the server.
      await waitFor(() => gaveUp, 'the Elector to give its term up', 5000);
      backend.failCalls(false);
      await waitFor(() => elected.length >= 2, 'a second term', 8000);
      expect(elected[1]).toBeGreaterThan(elected[0]!);
      // It went back to the server while that still held the first term: the stale grant was seen.
      const secondGrantAt = backend.calls.filter((c) => c.method === 'campaign' && (c.result as { role?: string } | undefined)?.role === 'leader')[1];
      expect((secondGrantAt?.result as { token?: number }).token).toBe(elected[0]);
    } finally {
      subs.forEach((sub) => sub.unsubscribe());
      await e.stop();
    }
  });

  test('a leader renews every renewMs, not once a lease: lease 1 200 ms, renewMs 200, over two leases', async () => {
    const backend = new ControlledBackend(new MemoryBackend());
    const e = new Elector({ backend, election: election(), candidateId: 'a', leaseMs: 1200, renewMs: 200 });
    const revoked: string[] = [];
    const sub = e.revoked$.subscribe(({ reason }) => revoked.push(reason));
    try {
      await e.start();
      const from = performance.now();
      await delay(2400);
      // Counted in the window itself: on a loaded machine the delay may end late, and renewals
      // sent after the window would count against a window they are not in.
      const renewals = backend.calls.filter((c) => c.method === 'renew' && c.sentAt >= from && c.sentAt < from + 2400).length;
      // Twelve intervals of 200 ms; a loaded machine only delays timers (fewer renewals, never
      // more). Once a lease would be two.
      expect(renewals).toBeGreaterThanOrEqual(6);
      expect(renewals).toBeLessThanOrEqual(13);
      expect(revoked).toEqual([]);
    } finally {
      sub.unsubscribe();
      await e.stop();
    }
  });

  test('health() names the last error of a backend that has not answered for more than a lease', async () => {
    const backend = new ControlledBackend(new MemoryBackend());
    const e = new Elector({ backend, election: election(), candidateId: 'a', leaseMs: 300, retryMs: 50, logger: null });
    try {
      await e.start();
      backend.failCalls();
      await waitFor(() => !e.health().ok && e.health().problem?.includes('more than a lease'), 'health to say the backend is unreachable', 5000);
      expect(e.health().problem).toMatch(/\(\d+ failed calls; last error: .*call refused/);
    } finally {
      await e.stop();
    }
  });
});
