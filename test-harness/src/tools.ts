/**
 * The part of the harness that loads outside Jest (the package's main entry also brings in the
 * conformance suites, which import @jest/globals): candidate processes, the split-brain checker,
 * the TCP proxy and what backend kits are made of (free ports, the kit and bench-server
 * interfaces), for programs such as the bench and for the kits themselves. The server launchers
 * are each backend package's own (`@conclave/<pkg>/testing`).
 */
export { freePort, waitForPort } from './servers/free-port';
export { CandidateProcess, CANDIDATE_SCRIPT } from './candidate/candidate-process';
export type { CandidateProcessOptions } from './candidate/candidate-process';
export type { CandidateCommand, CandidateConfig, CandidateReport } from './candidate/candidate-protocol';
export { checkSplitBrain, leadershipIntervals, summarize, checkGuardWrites, checkRecovery, processOf } from './history/split-brain-checker';
export type {
  GuardReport,
  GuardWrite,
  HealPoint,
  LeadershipInterval,
  RecoveryReport,
  SplitBrainOptions,
  SplitBrainReport,
  TermHistoryEvent,
} from './history/split-brain-checker';
export { freezeProcess } from './servers/freeze-process';
// What a backend package's kit implements (its `testing` entry), and how the harness finds one.
export { isBackendKit } from './kits/backend-kit';
export type { BackendKit, FollowerAllowance } from './kits/backend-kit';
export type { BenchServer, ServerCounters } from './kits/bench-server';
export { loadBackendKit, kitLabel, kitModuleName, resolveBackendKit } from './kits/load-backend-kit';
export { isBackendPackage, workspaceManifests } from './kits/workspace-packages';
export type { WorkspaceManifest } from './kits/workspace-packages';
export { FAILOVER_KINDS, FAULT_TOPOLOGIES, RECOVERY_SLACK_MS, durableServerEnvironment } from './soak/fault-environment';
export type { DurableServer, FailoverKind, FailoverRecord, FaultEnvironment, FaultEnvironmentCore, FaultServer, FaultTopology } from './soak/fault-environment';
export { replicatedServerEnvironment } from './soak/replicated-environment';
export type { ReplicaPair, ReplicatedEnvironment, ReplicationSteps } from './soak/replicated-environment';
export type { FaultKind } from './soak/fault-catalogue';
export { startTcpProxy } from './faults/tcp-proxy';
export type { TcpProxy, TcpProxyOptions } from './faults/tcp-proxy';
