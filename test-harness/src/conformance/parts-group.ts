import { describe, expect, test } from '@jest/globals';
import type { BackendFactory } from './conformance-options';
import { profileOf } from './backend-profile';

/**
 * First of all: the backend has the lease store, the admin part the suite needs, and exactly
 * the optional parts the suite was told (`factory.profile`), so nothing it has goes untested
 * and nothing it lacks is tried.
 */
export function describeParts(factory: BackendFactory): void {
  describe('parts', () => {
    test('the backend has the lease store, an admin part, and exactly the optional parts the suite was told', async () => {
      const backend = await factory.create();
      try {
        for (const method of ['campaign', 'renew', 'release', 'getLeader', 'close'] as const) expect(typeof backend[method]).toBe('function');
        expect(backend.admin).toBeDefined();
        expect(profileOf(backend)).toEqual(factory.profile);
      } finally {
        await backend.close();
      }
    });
  });
}
