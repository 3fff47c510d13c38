/**
 * `@conclave/core`: what a service calls — the Elector and its streams, runOnce, the shutdown
 * hook, errors, loggers, metrics options, MemoryBackend, and createBackend for URLs. Writing a
 * backend, or a wrapper of one, takes `@conclave/core/spi`.
 *
 * @module @conclave/core
 */
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
export { DEFAULT_LEASE_MS, defaultCandidateId } from './elector-options';
export type { ElectorOptions } from './elector-options';
export type { BackendState } from './backend-state';
export { MAX_TIMER_MS } from './wait-for-leadership';
export type { WaitForLeadershipOptions } from './wait-for-leadership';
export { runOnce } from './run-once';
export type { OnceTask, RunOnceOptions, RunOnceResult } from './run-once';
export { FORCED_EXIT_CODE, installShutdownHook } from './shutdown-hook';
export type { ShutdownHookOptions } from './shutdown-hook';
export type { ElectorMetricsOptions, MeterProviderLike } from './metrics';
export { ConclaveError, CONCLAVE_ERROR_CODES, isConclaveError } from './errors';
export type { ConclaveErrorCode, ConclaveErrorDetails } from './errors';
// The backend a user passes, and what its admin calls (`getLeader`) return.
export type { ElectionBackend, LeaderInfo } from './backend';
export { MemoryBackend, MemoryStore } from './memory-backend';
export type { MemoryBackendOptions } from './memory-backend';
export { createBackend } from './create-backend';
export { memoryProvider } from './memory-provider';
export type { BackendProvider } from './backend-provider';
export { redactUrl } from './redact-url';
export { consoleLogger, silentLogger } from './logger';
export type { Logger } from './logger';
export { fromBunyan, fromWinston } from './logger-adapters';
export type { BunyanLike, WinstonLike } from './logger-adapters';
