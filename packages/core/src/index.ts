export type {
  ElectionBackend,
  BackendCapabilities,
  CallGiveUp,
  CampaignRequest,
  CampaignResult,
  RenewRequest,
  RenewResult,
  ReleaseRequest,
  LeaderInfo,
  LeaderMetadataCapabilities,
  LeaseEndHint,
} from './backend';
export { NO_LEADER_METADATA, leaderMetadataOf } from './backend';
export { CAPABILITY_METHODS, assertCapabilitiesConsistent, capabilityOf, supports } from './capabilities';
export type { Capability, CapabilityValues, DeclaresCapabilities, MethodCapability, PushLevel } from './capabilities';
export { Elector } from './elector';
export type {
  Role,
  RevokeReason,
  LeadershipState,
  ElectedEvent,
  RevokedEvent,
  LeaseContext,
  LeaderTask,
  ElectorHealth,
} from './elector-types';
export { MAX_TIMER_MS } from './wait-for-leadership';
export type { WaitForLeadershipOptions } from './wait-for-leadership';
export { runOnce } from './run-once';
export type { OnceTask, RunOnceOptions, RunOnceResult } from './run-once';
export { FORCED_EXIT_CODE, installShutdownHook } from './shutdown-hook';
export type { ShutdownHookOptions } from './shutdown-hook';
export { electorMetrics } from './metrics';
export type { BackendState } from './backend-state';
export type { ElectorMetrics, ElectorMetricsOptions, MeterProviderLike } from './metrics';
export { DEFAULT_LEASE_MS, defaultCandidateId, resolveElectorOptions } from './elector-options';
export type { ElectorOptions, ResolvedElectorOptions } from './elector-options';
export { ConclaveError, CONCLAVE_ERROR_CODES, isConclaveError, toBackendError } from './errors';
export type { ConclaveErrorCode, ConclaveErrorDetails } from './errors';
export {
  INSTANCE_NONCE_LENGTH,
  MAX_INSTANCE_ID_LENGTH,
  assertInstanceId,
  candidateOf,
  candidateOfNullable,
  mayJoinLease,
  newInstanceId,
} from './instance-id';
export { MemoryBackend, MemoryStore } from './memory-backend';
export type { MemoryBackendOptions } from './memory-backend';
export { isBackendProvider } from './backend-provider';
export type { BackendProvider, BackendProviderContext } from './backend-provider';
export { createBackend, providerFor, providerUrl } from './create-backend';
export { memoryProvider } from './memory-provider';
export { REDACTED, redactText, redactUrl } from './redact-url';
export { consoleLogger, defaultLogger, silentLogger } from './logger';
export type { Logger } from './logger';
export { fromBunyan, fromWinston } from './logger-adapters';
export type { BunyanLike, WinstonLike } from './logger-adapters';
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
} from './validation';
export { assertOptionKeys, optionKeys } from './option-keys';
export type { OptionKey } from './option-keys';
export { BACKEND_METHODS, OPTIONAL_BACKEND_METHODS, ForwardingBackend, forwardBackend } from './forward-backend';
export type { BackendFn, BackendMethod, ForwardHooks } from './forward-backend';
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
