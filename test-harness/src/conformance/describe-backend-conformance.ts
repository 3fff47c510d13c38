import { afterEach, beforeEach, describe } from '@jest/globals';
import type { BackendFactory, ConformanceOptions } from './conformance-options';
import { SuiteContext, resolveConformanceOptions } from './suite-context';
import { describeParts } from './parts-group';
import { describeLeadership } from './leadership-group';
import { describeLeaseOwnership } from './lease-ownership-group';
import { describeAdminOperations } from './admin-group';
import { describeElectionExists } from './election-exists-group';
import { describeLifecycle } from './lifecycle-group';
import { describeHandover } from './handover-group';
import { describeScale } from './scale-group';
import { describeValidation } from './validation-group';
import { describeTokenFloor } from './token-floor-group';
import { describeTiming } from './timing-group';
import { describeDuplicateIds } from './duplicate-id-group';
import { describeWaitForLeadership } from './wait-for-leadership-group';
import { describeWatchLeader } from './watch-leader-group';
import { describeLeaderMetadata } from './leader-metadata-group';
import { describeGivenUpCalls } from './given-up-group';

/**
 * The shared conformance suite. A backend's test file calls it in a few lines:
 *
 * ```ts
 * describeBackendConformance('mysql', {
 *   profile: { candidates: false, changes: 'best-effort', … },
 *   create: () => new MysqlBackend({ uri }),
 * });
 * ```
 *
 * Parts the backend lacks (`factory.profile`) are `test.skip`ped with the reason, never passed
 * silently. The first test checks that the backend made has exactly the parts the suite was told.
 */
export function describeBackendConformance(
  name: string,
  factory: BackendFactory,
  options: ConformanceOptions = {},
): void {
  const resolved = resolveConformanceOptions(options);
  let context: SuiteContext | null = null;
  const ctx = () => {
    if (!context) throw new Error('conformance context used outside a test');
    return context;
  };
  describe(`conformance: ${name} backend`, () => {
    beforeEach(() => {
      context = new SuiteContext(factory, resolved);
    });
    afterEach(async () => {
      await context?.cleanup();
      context = null;
    });
    describeParts(factory);
    describeLeadership(ctx);
    describeLeaseOwnership(ctx);
    describeGivenUpCalls(ctx);
    describeAdminOperations(ctx, factory.profile.candidates);
    describeElectionExists(ctx);
    describeLifecycle(ctx);
    describeHandover(ctx);
    describeDuplicateIds(ctx);
    describeTokenFloor(ctx, factory.profile.tokenFloor);
    describeTiming(ctx, factory.profile);
    describeLeaderMetadata(ctx, factory.profile);
    describeScale(ctx, resolved.manyElections);
    describeValidation(ctx);
    describeWaitForLeadership(ctx);
    describeWatchLeader(ctx, factory.profile);
  });
}
