import { performance } from 'node:perf_hooks';
import { expect, test } from '@jest/globals';
import { forwardBackend } from '@conclave/core/spi';
import type { BackendProfile } from '../backend-profile';
import { delay, waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';

/**
 * A backend whose `changes.leaseEnds` is true: the lease ends it pushes to a follower are durations
 * within the lease, and they never hold a follower past a crashed leader's lease. Whether any
 * come may depend on the server (Redis: its keyspace notifications); both ways must hold.
 */
export function addLeaseEndPushTest(ctx: () => SuiteContext, profile: BackendProfile): void {
  const pushes = profile.leaseEnds;
  (pushes ? test : test.skip)(
    pushes
      ? 'lease ends pushed to a follower lie within the lease, and the follower still takes over a crashed leader right after its lease'
      : 'lease-end push (skipped: the backend pushes no lease ends)',
    async () => {
      const c = ctx();
      const election = c.election('lease-end');
      const aBackend = await c.backend();
      const a = await c.elector(election, 'a', { backend: aBackend });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', 2 * c.leaseMs);
      const hints: number[] = [];
      const bBackend = forwardBackend(await c.backend(), {
        watch: (next, e, id, onChange) =>
          next(e, id, (hint) => {
            if (hint) hints.push(hint.leaseRemainingMs);
            onChange(hint);
          }),
      });
      const b = await c.elector(election, 'b', { backend: bBackend });
      await b.start();
      await delay(2 * c.leaseMs); // a few renewals
      for (const ms of hints) {
        expect(Number.isFinite(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(c.leaseMs);
      }
      const frozenAt = performance.now();
      await c.freeze(aBackend);
      await waitFor(() => b.isLeader(), 'b to take over', 3 * c.leaseMs);
      // The lease left at the freeze is at most a lease; the slack covers a loaded machine.
      expect(performance.now() - frozenAt).toBeLessThan(c.leaseMs + Math.max(500, c.leaseMs / 2));
    },
  );
}
