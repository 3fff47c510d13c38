import { leaderMetadataOf, type Delivery, type ElectionBackend, type LeaderMetadataKept } from '@conclave/core/spi';

/**
 * The optional parts a backend has, as the conformance suite is told them before any server is
 * up (tests are declared before `beforeAll` runs), so that what a backend lacks is `test.skip`ped
 * with the reason. The suite's first test checks that the backend made has exactly these
 * (`profileOf`). The `admin` part is not in it: the suite needs it to stage revocations.
 */
export interface BackendProfile {
  /** `candidates`: the queue is listed. */
  candidates: boolean;
  /** `changes`: its delivery, or `'none'` without the part. */
  changes: Delivery | 'none';
  /** `changes.leaseEnds`. */
  leaseEnds: boolean;
  /** `leaderChanges`: its delivery, or `'none'` without the part. */
  leaderChanges: Delivery | 'none';
  /** `tokenFloor`. */
  tokenFloor: boolean;
  /** `tokenFloor.followsClock`: tokens may jump to the server's clock. */
  tokensFollowClock: boolean;
  /** `leaderMetadata`, every field given. */
  leaderMetadata: LeaderMetadataKept;
}

/** The profile of `backend` as made: what it has, read from its parts. */
export function profileOf(backend: ElectionBackend): BackendProfile {
  return {
    candidates: backend.candidates !== undefined,
    changes: backend.changes?.delivery ?? 'none',
    leaseEnds: backend.changes?.leaseEnds === true,
    leaderChanges: backend.leaderChanges?.delivery ?? 'none',
    tokenFloor: backend.tokenFloor !== undefined,
    tokensFollowClock: backend.tokenFloor?.followsClock === true,
    leaderMetadata: leaderMetadataOf(backend),
  };
}
