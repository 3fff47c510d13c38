/**
 * What every part of the MigratingBackend checks in a request, and how it passes a request on to
 * one side.
 */
import { assertElectionName, assertInstanceId, type ReleaseRequest, type RenewRequest } from '@conclave/core/spi';

/** The kind a MigratingBackend reports, and names in its errors. */
export const KIND = 'migrate';

// A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
export function validate(election: string, ...candidate: [candidateId?: string]): void {
  assertElectionName(election, KIND);
  if (candidate.length > 0) assertInstanceId(candidate[0], KIND, election);
}

/** The key of one candidate in one election, for what the dual phase keeps per candidate. */
export function termKey(election: string, candidateId: string): string {
  return `${election}\u0000${candidateId}`;
}

/**
 * The caller's deadline and signal, for the calls that carry out its request on each side (never
 * for give-backs of our own, which must go out whether or not the caller still waits).
 */
export function timingOf(request: RenewRequest | ReleaseRequest): Pick<ReleaseRequest, 'signal' | 'deadlineMs'> {
  return {
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.deadlineMs === undefined ? {} : { deadlineMs: request.deadlineMs }),
  };
}

/** Waits for `promise` and ignores its outcome (a best-effort give-back). */
export async function settle(promise: Promise<unknown>): Promise<void> {
  await promise.catch(() => undefined);
}

/** Throws the first rejection among `results`, if any: each side was tried whatever the other did. */
export function throwFirstFailure(results: PromiseSettledResult<unknown>[]): void {
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
