import { describe, expect, test } from '@jest/globals';
import { assertCapabilitiesConsistent } from '@conclave/core/spi';
import type { BackendFactory } from './conformance-options';

/**
 * First of all: the backend declares what the suite was told, and each optional method is there
 * exactly when its capability says so. The rest of the suite, like the core, reads only the
 * declaration (`supports`), so a disagreement would go untested or crash far from its cause.
 */
export function describeCapabilities(factory: BackendFactory): void {
  describe('capabilities', () => {
    test('the backend declares what the suite was told, and has each optional method exactly when it declares it', async () => {
      // The backend as made, not wrapped: a wrapper would refuse it before the check could say why.
      const backend = await factory.create();
      try {
        expect(backend.capabilities).toEqual(factory.capabilities);
        assertCapabilitiesConsistent(backend);
      } finally {
        await backend.close();
      }
    });
  });
}
