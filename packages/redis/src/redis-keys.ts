import { ConclaveError } from '@conclave/core';
import { describeValue } from '@conclave/core/spi';

/** The default `keyPrefix` of every key conclave writes. */
export const DEFAULT_KEY_PREFIX = 'conclave:';

// No braces (they would move the hash tag), no spaces or control characters.
const KEY_PREFIX = /^[A-Za-z0-9._:-]{1,64}$/;

export function assertKeyPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || !KEY_PREFIX.test(prefix)) {
    throw new ConclaveError(
      'INVALID_NAME',
      `keyPrefix must be 1–64 letters, digits or . _ : - (no braces), got ${describeValue(prefix)}`,
      { backend: 'redis' },
    );
  }
}

/**
 * The keys of one election. They share the hash tag `{election}` so that every script touches
 * one cluster slot (Redis Cluster refuses multi-key scripts across slots). Election names cannot
 * hold braces (see `assertElectionName`), and prefixes cannot either, so the tag is always the
 * election name.
 */
export interface ElectionKeys {
  /** Hash `{ holder, token }` with the lease as its TTL. */
  lease: string;
  /** String: the last term's token. Never expires — it is what keeps tokens increasing. */
  term: string;
  /** Sorted set: candidate id → server time (ms) after which it counts as gone. */
  candidates: string;
  /** Pub/sub channel: a message means "the leadership may have changed". */
  channel: string;
  /**
   * Pub/sub channel for observers (`watchLeader`): a message means "a new term started". Apart
   * from `channel`, so that candidates, which learn of a new term from their own campaigns, are
   * not woken by it.
   */
  elected: string;
  /**
   * String, one per key prefix (not per election): the server time (ms) from which this master
   * holds conclave's state. Absent on a master that never held it or lost it (a restart without
   * persistence, a flush); see the restart fence in redis-scripts.ts. Outside the election's hash
   * tag: scripts run on one master, never on a Redis Cluster.
   */
  epoch: string;
}

/** The keys of `election` under `prefix` (see `ElectionKeys`), for tools that inspect them. */
export function electionKeys(prefix: string, election: string): ElectionKeys {
  const base = `${prefix}{${election}}`;
  return {
    lease: `${base}:lease`,
    term: `${base}:term`,
    candidates: `${base}:candidates`,
    channel: changedChannel(prefix, election),
    elected: `${base}:elected`,
    epoch: `${prefix}epoch`,
  };
}

/** `electionKeys(prefix, election).channel` alone, for the checks that run on every push. */
export function changedChannel(prefix: string, election: string): string {
  return `${prefix}{${election}}:changed`;
}
