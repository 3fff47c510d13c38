import { performance } from 'node:perf_hooks';
import { expect } from '@jest/globals';
import { ConclaveError, type ConclaveErrorCode, type Elector } from '@conclave/core';

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

/**
 * What every test of a refusal checks of the error: a ConclaveError with `code`, whose message
 * names the server's answer (`names`) exactly once and none of `secrets`.
 */
export function expectRefusal(err: unknown, code: ConclaveErrorCode, names: RegExp, secrets: readonly string[]): void {
  expect(err).toBeInstanceOf(ConclaveError);
  const { code: got, message } = err as ConclaveError;
  expect({ code: got, message }).toEqual({ code, message: expect.stringMatching(names) });
  expect(message.match(new RegExp(names.source, 'g'))).toHaveLength(1);
  for (const secret of secrets) expect(message).not.toContain(secret);
}
