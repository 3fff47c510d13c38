import { getEventListeners } from 'node:events';
import { describe, expect, jest, test } from '@jest/globals';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/**
 * Spies on the timers of one wait: `cleared()` tells whether the timer made with `delayMs` (a
 * value nothing else uses) was cleared. Restores the globals on `restore()`.
 */
function trackTimer(delayMs: number) {
  const made: unknown[] = [];
  const cleared = new Set<unknown>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = jest.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...args: unknown[]) => {
    const handle = (realSet as (...a: unknown[]) => ReturnType<typeof setTimeout>)(fn, ms, ...args);
    if (ms === delayMs) made.push(handle);
    return handle;
  }) as typeof setTimeout);
  const clear = jest.spyOn(globalThis, 'clearTimeout').mockImplementation(((handle?: Parameters<typeof clearTimeout>[0]) => {
    cleared.add(handle);
    realClear(handle);
  }) as typeof clearTimeout);
  return {
    made: () => made.length,
    cleared: () => made.length > 0 && made.every((h) => cleared.has(h)),
    restore: () => {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}

/** Elector.waitForLeadership on a real backend: what it resolves with, and each way it ends. */
export function describeWaitForLeadership(ctx: () => SuiteContext): void {
  describe('waitForLeadership', () => {
    test("resolves with the Elector's token: at once for the leader, and for a follower once the leader stops", async () => {
      const c = ctx();
      const election = c.election('wait');
      const a = await c.elector(election, 'a');
      await a.start();
      const led = await a.waitForLeadership({ timeoutMs: c.leaseMs * 10 });
      expect(a.isLeader()).toBe(true);
      expect(led.token).toBe(a.token);

      const b = await c.elector(election, 'b');
      await b.start();
      await waitFor(() => b.state.leaderId === 'a', 'b to see a lead');
      const waiting = b.waitForLeadership({ timeoutMs: c.leaseMs * 10 });
      await a.stop();
      const next = await waiting;
      expect(b.isLeader()).toBe(true);
      expect(next.token).toBe(b.token);
      expect(next.token).toBeGreaterThan(led.token);
    });

    test('while another leads, a wait rejects with TIMEOUT, with ABORTED on its signal and with STOPPED when the Elector stops, leaving no timer or listener', async () => {
      const c = ctx();
      const election = c.election('wait-end');
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const b = await c.elector(election, 'b');
      await b.start();
      await waitFor(() => b.state.leaderId === 'a', 'b to see a lead');

      const startedAt = performance.now();
      await expect(b.waitForLeadership({ timeoutMs: 300 })).rejects.toMatchObject({ code: 'TIMEOUT' });
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);

      // Long timeouts with distinct lengths, so the spy finds each wait's own timer.
      const aborted = trackTimer(987_651);
      try {
        const controller = new AbortController();
        const waiting = b.waitForLeadership({ timeoutMs: 987_651, signal: controller.signal });
        setTimeout(() => controller.abort(), 50);
        await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
        expect(aborted.made()).toBe(1);
        expect(aborted.cleared()).toBe(true);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      } finally {
        aborted.restore();
      }

      const stopped = trackTimer(987_652);
      try {
        const controller = new AbortController();
        const waiting = expect(b.waitForLeadership({ timeoutMs: 987_652, signal: controller.signal })).rejects.toMatchObject({
          code: 'STOPPED',
        });
        await b.stop();
        await waiting;
        expect(stopped.made()).toBe(1);
        expect(stopped.cleared()).toBe(true);
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      } finally {
        stopped.restore();
      }
      expect(a.isLeader()).toBe(true);
    });
  });
}
