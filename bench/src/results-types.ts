/**
 * The shape of a results file (bench/results/*.json): written once by the run, read back by the
 * report, which regenerates every table and the chart from it alone.
 */
import type { SystemKind } from './servers';
import type { FrozenResult, HandoverResult, PartitionResult, SteadyResult } from './scenarios';
import type { ManyResult } from './many-elections';

export interface BackendResult {
  kind: SystemKind;
  server: string;
  /** The server's own name and version (older files have none). */
  serverVersion?: string;
  counters: string;
  /** The target for an idle follower's traffic, from the backend's kit (none: not targeted; older files have none). */
  followerTarget?: { maxPerSec: number; target: string };
  graceful?: HandoverResult;
  crash?: HandoverResult;
  frozen?: FrozenResult;
  partition?: PartitionResult;
  steady?: SteadyResult;
  many?: ManyResult;
  errors: string[];
  wallMs: number;
}

export interface Machine {
  nproc: number;
  cpuModel: string;
  node: string;
  os: string;
  memGiB: number | null;
  loadavgAtStart: Array<number | null>;
  loadavgAtEnd?: Array<number | null>;
}

export interface RunPlan {
  graceful: number;
  crash: number;
  frozen: number;
  partition: number;
  steadyWindowMs: number;
  steadyManyElections: number;
  manyElections: number;
  manyWindowMs: number;
  /** Whole run bound. */
  limitMs: number;
}

export interface ResultsFile {
  date: string;
  /** As typed: `npm run bench -- <argv>`. */
  command: string;
  /** The arguments exactly as the process received them (older files have only `command`). */
  argv?: string[];
  /** The commit the bench ran from, when known. */
  commit?: string | null;
  /** What to know when reading these figures (e.g. measured alongside other work). */
  note?: string | null;
  quick: boolean;
  wallMs: number;
  machine: Machine;
  leaseMs: number;
  plan: RunPlan;
  /** Peers asked for (older files: derive from `results`). */
  peers?: string[];
  /** Systems asked for but not run, with why. */
  skipped?: string[];
  results: BackendResult[];
}
