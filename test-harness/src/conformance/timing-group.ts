import { describe } from '@jest/globals';
import type { BackendProfile } from './backend-profile';
import type { SuiteContext } from './suite-context';
import { addAdminEndingTests } from './timing/admin-ending-tests';
import { addDeadlineTests } from './timing/deadline-tests';
import { addLeaseEndPushTest } from './timing/lease-end-push-test';
import { addPushWakeTest } from './timing/push-wake-test';
import { addReleaseTests } from './timing/release-tests';
import { addNoEarlyHandOnAfterAdminTests, addNoEarlyHandOnTest } from './timing/server-hand-on-tests';
import { addSignalAbortTests } from './timing/signal-abort-tests';

/**
 * Timing, pinned down deterministically: when a leader's deadline falls, what ends a term and
 * when its signal aborts, that a release frees the lease at once, that the server never frees it
 * early, that push wakes a follower long before any poll could, and that pushed lease ends never
 * keep a follower past a crashed leader's lease.
 */
export function describeTiming(ctx: () => SuiteContext, profile: BackendProfile): void {
  describe('timing', () => {
    // In this order, the order the tests have always run in.
    addDeadlineTests(ctx);
    addReleaseTests(ctx);
    addSignalAbortTests(ctx);
    addNoEarlyHandOnTest(ctx);
    addAdminEndingTests(ctx);
    addNoEarlyHandOnAfterAdminTests(ctx);
    addPushWakeTest(ctx, profile);
    addLeaseEndPushTest(ctx, profile);
  });
}
