import { isConclaveError, silentLogger } from '@conclave/core';
import { resolveElectorOptions, type ElectionBackend } from '@conclave/core/spi';
import { UsageError } from './cli-errors';

/** Longest lease searched for the minimum, ms: the Elector's rules are met far below it. */
const SEARCH_UP_TO_MS = 10_000;

/**
 * The shortest `--lease-ms` the Elector accepts with its other options at their defaults (the
 * safety margin and the renewal must fit in the lease), found with the Elector's own validation
 * so that the two never disagree.
 */
export function minimumLeaseMs(backend: ElectionBackend, election: string): number {
  for (let leaseMs = 1; leaseMs < SEARCH_UP_TO_MS; leaseMs++) {
    try {
      resolveElectorOptions({ backend, election, candidateId: 'x', leaseMs, logger: silentLogger });
      return leaseMs;
    } catch {
      // too short; try the next
    }
  }
  return SEARCH_UP_TO_MS;
}

/**
 * The Elector's INVALID_OPTIONS for a lease that is too short names its own options
 * (`safetyMarginMs`, `renewMs`), which the CLI does not have: say it in terms of --lease-ms.
 * Other errors are returned unchanged.
 */
export function inFlagTerms(err: unknown, leaseMs: number | undefined, backend: ElectionBackend, election: string, command: string): unknown {
  if (leaseMs === undefined || !isConclaveError(err, 'INVALID_OPTIONS')) return err;
  const minimum = minimumLeaseMs(backend, election);
  if (leaseMs >= minimum) return err;
  return new UsageError(
    `--lease-ms ${leaseMs} is too short: at least ${minimum} ms (a leader stops a safety margin before its lease ends and renews before that)`,
    command,
  );
}
