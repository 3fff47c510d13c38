export { describeBackendConformance } from './conformance/describe-backend-conformance';
export type { BackendFactory, ConformanceOptions } from './conformance/conformance-options';
export { describeLeadership, nextElected } from './conformance/leadership-group';
export { describeLeaseOwnership } from './conformance/lease-ownership-group';
export { describeAdminOperations } from './conformance/admin-group';
export { describeLifecycle } from './conformance/lifecycle-group';
export { describeHandover } from './conformance/handover-group';
export { describeScale } from './conformance/scale-group';
export { describeTokenFloor } from './conformance/token-floor-group';
export { describeTiming } from './conformance/timing-group';
export { describeWaitForLeadership } from './conformance/wait-for-leadership-group';
export { describeWatchLeader } from './conformance/watch-leader-group';
export { describeLeaderMetadata } from './conformance/leader-metadata-group';
export { describeValidation, BAD_CANDIDATE_IDS, BAD_ELECTION_NAMES, BAD_ELECTOR_OPTIONS } from './conformance/validation-group';
export { SuiteContext } from './conformance/suite-context';
export { leaderOf } from './campaign-result';
export { ControlledBackend, HangableBackend } from './controlled-backend';
export type { CallFilter, ControlledCall } from './controlled-backend';
export { HistoryRecorder, monotonicMs } from './history/history-recorder';
export type { HistoryEvent } from './history/history-recorder';
// Servers, candidate processes, the checker and the TCP proxy: also loadable without Jest.
export * from './tools';
export { waitFor, delay } from './wait-for';
export { thrown } from './thrown';
// Fault injection, guarded resource, fault runs and soak.
export { startFaultProxy } from './faults/fault-proxy';
export type { FaultProxy, FaultProxyOptions } from './faults/fault-proxy';
export { Prng, randomSeed, seedFromEnv } from './faults/prng';
export { openGuard, prepareGuard, readGuard, dropGuard } from './guard/guarded-resource';
export type { GuardClient } from './guard/guarded-resource';
export type { GuardConfig, GuardState, GuardVerdict } from './guard/guard-config';
export { FaultCluster, lastLeaseUntil, DUPLICATE_CANDIDATE_ID, GUARD_MYSQL_URL, GUARD_REDIS_URL } from './soak/fault-cluster';
export type { CandidateSlot, FaultClusterOptions } from './soak/fault-cluster';
export { startFaultEnvironment } from './soak/fault-environment';
export { runFaultSoak } from './soak/fault-run';
export { summarizeRun } from './soak/fault-summary';
export { FAULT_KINDS, DEFAULT_FAULT_WEIGHTS, TOPOLOGY_FAULT_WEIGHTS } from './soak/fault-catalogue';
export type { FaultRecord, FaultRunOptions, FaultRunResult } from './soak/fault-run';
export {
  connectedServer,
  duplicateIdScenario,
  emptyRestartScenario,
  ensembleScenario,
  frozenLeaderScenario,
  quorumMinorityRestartScenario,
  serverRestartScenario,
  silentPartitionScenario,
} from './soak/fault-scenarios';
export type { EnsembleScenarioResult, ScenarioOutcome } from './soak/fault-scenarios';
export { describeFaultSuite, safetyProblems, topologyFaultRunTest } from './soak/fault-test-suite';
export { describeDuplicateIdFaults } from './soak/duplicate-id-suite';
export { describeDirectedEnsemble } from './soak/ensemble-test-suite';
export type { DirectedEnsembleOptions } from './soak/ensemble-test-suite';
export type { FaultSuiteOptions, TopologyRunOptions } from './soak/fault-test-suite';
export { RollingDeployment, nodeKindOf } from './soak/rolling-deployment';
export type { RollRecord, RolloutReport } from './soak/rolling-deployment';
export { expectRefusal, startRejection } from './start-rejection';
