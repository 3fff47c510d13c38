/**
 * `@conclave/core/spi`: for writing a backend or a wrapper of one (and for the conclave
 * packages, command and test harness): the `ElectionBackend` contract (a lease store and its
 * optional parts, see BACKEND-CONTRACT.md) with its requests and results, the checks every
 * backend makes before any I/O, and the helpers the backends share. A service needs none of it: `@conclave/core` is the API. The contract is
 * versioned with the package; the shared helpers may change in any release, without a major
 * version.
 */

// The contract (documented in backend.ts, BACKEND-CONTRACT.md and backend-provider.ts).
export type {
  LeaseStore,
  ElectionBackend,
  BackendAdmin,
  CandidateQueue,
  ChangeFeed,
  LeaderFeed,
  TokenFloor,
  Delivery,
  CallGiveUp,
  CampaignRequest,
  CampaignResult,
  RenewRequest,
  RenewResult,
  ReleaseRequest,
  LeaderInfo,
  LeaderMetadataKept,
  LeaseEndHint,
} from './backend';
export { NO_LEADER_METADATA, leaderMetadataOf } from './backend';
export { isBackendProvider } from './backend-provider';
export type { BackendProvider, BackendProviderContext } from './backend-provider';
export { providerFor, providerUrl } from './create-backend';

// Checks of names, values, requests and options, made before any I/O.
export {
  MAX_CANDIDATE_ID_LENGTH,
  MAX_ELECTION_NAME_LENGTH,
  MAX_LEADER_VALUE_BYTES,
  assertCandidateId,
  assertLeaderValue,
  assertElectionName,
  assertOptionsObject,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  assertTokenFloor,
  describe as describeValue,
} from './validation';
export { assertOptionKeys, optionKeys } from './option-keys';
export type { OptionKey } from './option-keys';
export { closestWord } from './closest-word';
export { resolveElectorOptions } from './elector-options';
export type { ResolvedElectorOptions } from './elector-options';
export { toBackendError } from './errors';
export { REDACTED, redactText } from './redact-url';

// One candidate's instances, and the revocation of a lease by forceLeader/clearLeader.
export {
  INSTANCE_NONCE_LENGTH,
  MAX_INSTANCE_ID_LENGTH,
  assertInstanceId,
  candidateOf,
  candidateOfNullable,
  mayJoinLease,
  newInstanceId,
} from './instance-id';
export {
  FORCE_ATTEMPTS,
  TOMBSTONE_POLL_MS,
  forceAfterRevocation,
  isTombstone,
  tombstoneGraceMs,
  tombstoneHolder,
  tombstoneLookAgainMs,
} from './revocation';
export type { Revocation } from './revocation';
export { campaignOutcome, heldByAnother, isLiveLease, leaderInfoFromRow, leaseRowsByName } from './lease-row';
export type { LeaseRow, LiveLeaseRow } from './lease-row';

// Wrapping a backend: every operation forwarded through one helper.
export { BACKEND_METHODS, OPTIONAL_BACKEND_METHODS, ForwardingBackend, forwardBackend, operationOf } from './forward-backend';
export type { BackendFn, BackendMethod, BackendOperations, ForwardHooks } from './forward-backend';

// Pacing many elections on one connection, deadlines and given-up calls, lazy drivers.
export { TickBatcher } from './tick-batcher';
export { CampaignSlots, CAMPAIGNS_AT_ONCE } from './campaign-slots';
export { GridTimers, gridTimers } from './grid-timers';
export { withTimeout } from './timing';
export { givenUpError, throwIfGivenUp, whenGivenUp } from './given-up';
export { loadedOnFirstUse } from './loaded-on-first-use';
