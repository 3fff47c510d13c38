/**
 * The part of the harness that loads outside Jest (the package's main entry also brings in the
 * conformance suites, which import @jest/globals): server launchers, candidate processes, the
 * split-brain checker and the TCP proxy, for programs such as the bench.
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
export { startMariadb } from './servers/mysql-server';
export type { MariadbServer, StartMariadbOptions } from './servers/mysql-server';
export { RedisServer, startRedisServers } from './servers/redis-server';
export type { RedisServerOptions } from './servers/redis-server';
export { startZookeeperServer, startZookeeperEnsemble, fourLetterWord, zookeeperClasspath } from './servers/zookeeper-server';
export type { ZookeeperServer, ZookeeperEnsemble, ZookeeperServerOptions } from './servers/zookeeper-server';
export { startTcpProxy } from './faults/tcp-proxy';
export type { TcpProxy, TcpProxyOptions } from './faults/tcp-proxy';
