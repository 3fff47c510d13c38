import { expect, test } from '@jest/globals';
import type { DeclaresCapabilities } from '@conclave/core/spi';
import type { SuiteContext } from '../suite-context';

/** The backend declares only capabilities the suite knows, so none goes untested. */
export function addKnownCapabilitiesTest(ctx: () => SuiteContext, declared: DeclaresCapabilities): void {
  const { capabilities } = declared;
  test('every declared capability is one the suite knows and tests', async () => {
    const c = ctx();
    const backend = await c.backend();
    expect(backend.capabilities).toEqual(capabilities);
    // Each capability the suite knows is exercised by a test of its own (admin operations,
    // electionExists, token floor, push, leaseEndPush above; tokenClock, a declaration that tokens may jump, by
    // 'tokens strictly increase across many terms'; leaderPush by the watchLeader group;
    // leaderMetadata, field by field, by the leader metadata group); a capability it does not know
    // would go untested.
    const known = ['listCandidates', 'electionExists', 'push', 'leaseEndPush', 'tokenFloor', 'tokenClock', 'leaderPush', 'leaderMetadata'];
    expect(Object.keys(capabilities).filter((k) => !known.includes(k))).toEqual([]);
    // Whether each method agrees with its capability: the capabilities group, first of all.
  });
}
