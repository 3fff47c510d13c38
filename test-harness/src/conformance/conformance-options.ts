import type { ElectionBackend } from '@conclave/core';
import type { BackendProfile } from './backend-profile';

/**
 * How the conformance suite gets backends. Every candidate in a test gets its own backend from
 * `create()` (its own connection or session, as separate processes would have); the suite closes
 * each one at the end of the test.
 */
export interface BackendFactory {
  /**
   * The optional parts the backends made by `create()` have. Needed before any server is up
   * (tests are declared before `beforeAll` runs) to `test.skip` what a backend lacks.
   */
  profile: BackendProfile;
  /** A fresh backend connected to the server under test. */
  create(): Promise<ElectionBackend> | ElectionBackend;
  /**
   * Makes `backend` behave like a frozen process as the server sees it: it stops renewing and the
   * server lets its lease lapse. The suite already makes every call through this backend hang;
   * backends whose lease is kept alive by something other than renew calls (a ZooKeeper session's
   * heartbeats) cut that here too. Optional.
   */
  freeze?(backend: ElectionBackend): Promise<void> | void;
}

export interface ConformanceOptions {
  /** Lease used by the suite's Electors, ms. Default 1500: long enough for a slow, shared CI machine. */
  leaseMs?: number;
  /** Elections in the "many elections at once" test. Default 200. */
  manyElections?: number;
  /** Prefix of the election names the suite uses, so runs do not meet. Default `conformance-<random>`. */
  electionPrefix?: string;
}
