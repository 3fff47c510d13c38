import { performance } from 'node:perf_hooks';
import { expect } from '@jest/globals';
import { ConclaveError, type Elector } from '@conclave/core';

/**
 * `start()`'s rejection, and how long after the call it came: for the tests that a configuration
 * the server can never serve fails loudly at once. A `start()` that resolves fails the test.
 */
export async function startRejection(e: Elector): Promise<{ err: ConclaveError; ms: number }> {
  const startedAt = performance.now();
  const err = await e.start().then(
    () => {
      throw new Error(`start() resolved as ${e.state.role}`);
    },
    (reason: unknown) => reason,
  );
  expect(err).toBeInstanceOf(ConclaveError);
  return { err: err as ConclaveError, ms: performance.now() - startedAt };
}
