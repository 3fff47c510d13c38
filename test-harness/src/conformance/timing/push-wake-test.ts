import { performance } from 'node:perf_hooks';
import { expect, test } from '@jest/globals';
import { candidateOfNullable } from '@conclave/core/spi';
import type { BackendProfile } from '../backend-profile';
import { waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';
import { LONG_LEASE_MS } from './lease-grants';

/** A backend with a `changes` part wakes a watching follower on release, long before a poll would. */
export function addPushWakeTest(ctx: () => SuiteContext, profile: BackendProfile): void {
  const push = profile.changes;
  const pushTest = push !== 'none' ? test : test.skip;
  pushTest(
    push !== 'none'
      ? `a release wakes a watching follower at once (push: ${push}), long before a poll`
      : 'push wake-up (skipped: the backend has no changes part)',
    async () => {
      const c = ctx();
      const election = c.election('push');
      const a = await c.elector(election, 'a', { leaseMs: LONG_LEASE_MS, retryMs: LONG_LEASE_MS / 2 });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', LONG_LEASE_MS);
      const bBackend = await c.backend();
      const b = await c.elector(election, 'b', { backend: bBackend, leaseMs: LONG_LEASE_MS, retryMs: LONG_LEASE_MS / 2 });
      await b.start();
      await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', LONG_LEASE_MS);
      const isWatching = bBackend.changes?.isWatching;
      if (isWatching) await waitFor(() => isWatching(election, b.instanceId), 'b\'s watch to be up', LONG_LEASE_MS);
      const stoppedAt = performance.now();
      await a.stop();
      // b's next look without push: a poll at retryMs (half a lease) or the lease's end.
      await waitFor(() => b.isLeader(), 'b to be woken', LONG_LEASE_MS / 4);
      expect(performance.now() - stoppedAt).toBeLessThan(LONG_LEASE_MS / 4);
    },
  );
}
