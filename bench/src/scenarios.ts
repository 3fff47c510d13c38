/**
 * The single-election scenarios of bench/README.md, each on real candidate processes
 * (test-harness `CandidateProcess`: one Elector per forked process, reporting on the shared
 * monotonic clock). The runner and the server targets import them from here; each scenario
 * family lives in a `scenario-*.ts` file of its own.
 */
export { electionName, type BenchSettings } from './scenario-settings';
export { startCandidate, type BenchCandidate } from './scenario-candidates';
export { handover, type HandoverResult } from './scenario-handover';
export { frozenLeader, type FrozenResult, type FrozenRound } from './scenario-frozen-leader';
export { silentPartition, type PartitionResult, type PartitionRound } from './scenario-partition';
export { steadyState, type RateSample, type SteadyResult } from './scenario-steady-state';
