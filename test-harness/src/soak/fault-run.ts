import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GuardState } from '../guard/guard-config';
import { Prng } from '../faults/prng';
import { monotonicMs } from '../history/history-recorder';
import {
  checkRecovery,
  checkSplitBrain,
  summarize,
  type GuardWrite,
  type HealPoint,
  type LeadershipInterval,
  type RecoveryReport,
  type SplitBrainReport,
  type TermHistoryEvent,
} from '../history/split-brain-checker';
import { resolveBackendKit } from '../kits/load-backend-kit';
import { delay } from '../wait-for';
import { runFault, type FaultRecord } from './fault-actions';
import { FAULT_KINDS, weightsFor, type FaultKind } from './fault-catalogue';
import { FaultCluster, type FaultClusterOptions } from './fault-cluster';
import type { FaultTopology } from './fault-environment';
import { planEpisode } from './fault-plan';
import { rolloutLine } from './fault-summary';
import { RollingDeployment, type RolloutReport } from './rolling-deployment';

export type { FaultRecord } from './fault-actions';

export interface FaultRunOptions extends Omit<FaultClusterOptions, 'label'> {
  /** Faults are started until this much time has passed, ms (the run then heals and stops). */
  durationMs: number;
  seed: number;
  weights?: Partial<Record<FaultKind, number>>;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Ends the run early (it still heals, stops and checks). */
  signal?: AbortSignal;
  /** Where to write the history when the run finds a problem. Default: a file under the temp dir. */
  dumpPath?: string | null;
  /**
   * Where the environment has node kinds (`migrate`): also stop starting episodes once the
   * rolling deployment has gone forward and back this many times.
   */
  rolloutCycles?: number;
}

export interface FaultRunResult {
  /** The kind of the backend's kit. */
  backend: string;
  topology: FaultTopology;
  seed: number;
  leaseMs: number;
  elapsedMs: number;
  faults: FaultRecord[];
  faultCounts: Record<FaultKind, number>;
  episodes: number;
  report: SplitBrainReport;
  recovery: RecoveryReport;
  guardState: GuardState | null;
  /** Each a sentence; empty when the run is clean. */
  problems: string[];
  ok: boolean;
  /**
   * Followers that reported themselves as the leader (`leader$` = own id while not elected) and
   * were not elected within a lease: the signature of a candidate queued behind its own node.
   */
  selfLeaderFollowers: Array<{ process: string; atMs: number }>;
  /** Where the history was written, when there were problems. */
  dumpedTo: string | null;
  /** The rolling deployment, where the environment has node kinds (one step per episode). */
  rollout: RolloutReport | null;
  /** With a rollout: `MIGRATION_CONFLICT` errors the candidates logged (each a false alarm, see `runFaults`). */
  migrationConflicts: number;
  history: TermHistoryEvent[];
  writes: GuardWrite[];
}

/**
 * A seeded randomized fault run: episodes of 1–3 simultaneous faults (drawn from the catalogue
 * with the seeded PRNG), each healed after its hold time; after every episode the run waits for a
 * leader (liveness, bounded by leaseMs + the environment's documented margin) and pauses briefly.
 * Where the environment has node kinds (`migrate`), every episode also moves one candidate a step
 * of a rolling deployment, at a random point of the episode (so often during a fault).
 * At the end every candidate is stopped and the whole history is checked.
 */
export async function runFaultSoak(options: FaultRunOptions): Promise<FaultRunResult> {
  const log = options.log ?? (() => undefined);
  const rng = new Prng(options.seed);
  const topology = options.topology ?? 'single';
  const kit = await resolveBackendKit(options.backend);
  const backend = kit.kind;
  const cluster = await FaultCluster.start({ ...options, backend: kit, label: `${backend}-${topology}-${options.seed}` });
  const leaseMs = cluster.leaseMs;
  const weights = weightsFor(cluster.env, kit.faultWeights, options.weights);
  const faults: FaultRecord[] = [];
  const heals: HealPoint[] = [];
  const recoveryBoundMs = leaseMs + cluster.env.recoveryMarginMs;
  const rollout = cluster.env.nodeKinds ? new RollingDeployment(cluster, cluster.env.nodeKinds, recoveryBoundMs) : null;
  const cyclesDone = () => rollout !== null && options.rolloutCycles !== undefined && rollout.cyclesDone >= options.rolloutCycles;
  const started = monotonicMs();
  let episodes = 0;
  let runError: unknown = null;
  try {
    const first = await cluster.waitForLeader(30_000);
    if (first === null) throw new Error(`no leader within 30 s of start-up${lastLogged(cluster)}`);
    let lastProgress = monotonicMs();
    while (monotonicMs() - started < options.durationMs && !options.signal?.aborted && !cyclesDone()) {
      episodes++;
      const plan = planEpisode(rng, weights, cluster.slots.length, cluster.env, leaseMs);
      // Drawn up front too, so the seed fixes which slot moves whatever the timing.
      const roll = rollout ? { atMs: rng.int(0, Math.round(leaseMs / 2)), draw: rng.next() } : null;
      const [rolled] = await Promise.all([
        roll ? delay(roll.atMs).then(() => rollout!.step(roll.draw)) : Promise.resolve(null),
        ...plan.map((f) => runFault(cluster, f, rng, faults)),
      ]);
      const healedAt = monotonicMs();
      const label = [...plan.map((f) => f.kind), ...(rolled ? [`roll ${rolled.from}→${rolled.to}`] : [])].join('+');
      heals.push({ atMs: healedAt, label, boundMs: recoveryBoundMs });
      const waited = await cluster.waitForLeader(recoveryBoundMs + 10_000, healedAt);
      if (waited === null) log(`episode ${episodes} (${label}): no leader ${Math.round(recoveryBoundMs + 10_000)} ms after healing (${cluster.describeSlots()})`);
      await delay(rng.int(100, 800));
      if (monotonicMs() - lastProgress > 30_000) {
        lastProgress = monotonicMs();
        const steps = rollout ? `, ${rolloutLine(rollout.report())}` : '';
        log(`${backend} ${topology}: ${Math.round((lastProgress - started) / 1000)} s, ${faults.length} faults, ${episodes} episodes${steps}`);
      }
    }
  } catch (err) {
    runError = err;
  }
  const elapsedMs = monotonicMs() - started;
  let guardState: GuardState | null = null;
  try {
    await cluster.stopCandidates();
    guardState = await cluster.guardState().catch(() => null);
  } finally {
    await cluster.close();
  }
  const history = cluster.history();
  const writes = cluster.writes();
  const report = checkSplitBrain(history, { writes });
  const endMs = history.reduce((m, e) => Math.max(m, e.atMs), 0);
  const recovery = checkRecovery(report.intervals, heals, endMs, history);
  // Every candidate was stopped: a term still open had its end go unreported.
  const unended = report.intervals.filter((iv) => iv.endMs === Infinity);

  const problems: string[] = [];
  if (runError) problems.push(`the run failed: ${runError instanceof Error ? runError.message : String(runError)}`);
  if (report.overlaps.length) problems.push(`${report.overlaps.length} overlapping leadership intervals`);
  if (report.tokenRegressions.length) problems.push(`${report.tokenRegressions.length} token regressions`);
  if (report.staleWork.length) problems.push(`${report.staleWork.length} units of stale work`);
  if (report.workOutsideTerm.length) problems.push(`${report.workOutsideTerm.length} units of work outside the worker's term`);
  const g = report.guard;
  if (g && g.staleWrites.length) problems.push(`${g.staleWrites.length} stale writes accepted by the guarded resource`);
  if (g && g.sharedTokens.length) problems.push(`${g.sharedTokens.length} tokens accepted from two processes`);
  if (g && guardState && guardState.seq < g.accepted) problems.push(`guard counted ${guardState.seq} accepted writes, candidates ${g.accepted}`);
  if (unended.length) problems.push(`${unended.length} terms never ended (${unended.map((iv) => `${iv.process}@${iv.token}`).join(', ')})`);
  if (recovery.late.length) problems.push(`${recovery.late.length} heals not followed by a leader within ${recoveryBoundMs} ms`);

  // The rollout never starts two kinds that share no lease side by side (it checks before each
  // step), so a to-only candidate that reports the forbidden mix is mistaken: it refused to lead
  // for nothing (a dual node taken for an old one, say).
  const migrationConflicts = rollout ? countLogged(cluster, 'MIGRATION_CONFLICT') : 0;
  if (migrationConflicts) problems.push(`${migrationConflicts} MIGRATION_CONFLICT reports with no forbidden mix running`);

  const selfLeaderFollowers = findSelfLeaderFollowers(cluster, report.intervals, leaseMs);
  if (selfLeaderFollowers.length) problems.push(`${selfLeaderFollowers.length} followers saw themselves as leader for more than a lease`);

  const faultCounts = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const f of faults) faultCounts[f.kind]++;
  let dumpedTo: string | null = null;
  if (problems.length > 0 && options.dumpPath !== null) {
    dumpedTo = options.dumpPath ?? join(tmpdir(), `conclave-faults-${backend}-${topology}-${options.seed}.json`);
    try {
      writeFileSync(dumpedTo, JSON.stringify(
          {
            options: { ...options, backend, signal: undefined, log: undefined },
            problems,
            faults,
            heals,
            rollout: rollout?.report() ?? null,
            report,
            recovery,
            history,
            writes,
            reports: Object.fromEntries(cluster.processes.map((p) => [p.key, p.reports.filter((r) => r.type !== 'work' && r.type !== 'write')])),
          },
          null,
          1,
        ));
    } catch {
      dumpedTo = null;
    }
  }
  return {
    backend,
    topology,
    seed: options.seed,
    leaseMs,
    elapsedMs,
    faults,
    faultCounts,
    episodes,
    report,
    recovery,
    guardState,
    problems,
    ok: problems.length === 0,
    selfLeaderFollowers,
    dumpedTo,
    rollout: rollout?.report() ?? null,
    migrationConflicts,
    history,
    writes,
  };
}

/**
 * A follower whose `leader$` names its own candidate id for more than a lease. Where candidate
 * ids repeat, naming its own id is right while another process with that id leads, and after it
 * died for as long as its lease or session lingers on the server: a span that meets a twin's
 * term, extended by the environment's recovery margin, is not counted.
 */
function findSelfLeaderFollowers(cluster: FaultCluster, intervals: readonly LeadershipInterval[], leaseMs: number): Array<{ process: string; atMs: number }> {
  const linger = cluster.env.recoveryMarginMs;
  const found: Array<{ process: string; atMs: number }> = [];
  for (const proc of cluster.processes) {
    let leading = false;
    let since: number | null = null;
    const twinLeads = (fromMs: number, untilMs: number) =>
      intervals.some((iv) => iv.candidateId === proc.id && iv.process !== proc.key && iv.startMs <= untilMs && iv.endMs + linger >= fromMs);
    const flush = (untilMs: number) => {
      if (since !== null && untilMs - since > leaseMs && !twinLeads(since, untilMs)) found.push({ process: proc.key, atMs: since });
      since = null;
    };
    for (const r of proc.reports) {
      if (r.type === 'elected') {
        flush(r.atMs);
        leading = true;
      } else if (r.type === 'revoked') {
        leading = false;
      } else if (r.type === 'leader') {
        if (!leading && r.leaderId === proc.id) since ??= r.atMs;
        else if (r.leaderId !== proc.id) flush(r.atMs);
      } else if (r.type === 'stopped') flush(r.atMs);
    }
    if (since !== null) flush(proc.killedAtMs ?? proc.reports[proc.reports.length - 1]?.atMs ?? since);
  }
  return found;
}

/** How many errors with `code` the candidates logged (repeats within a second count once). */
function countLogged(cluster: FaultCluster, code: string): number {
  return cluster.processes.reduce((n, p) => n + p.reports.filter((r) => r.type === 'log' && r.code === code).length, 0);
}

/** `; candidates logged: "<message>"`, the last warning or error any candidate logged, or ''. */
function lastLogged(cluster: FaultCluster): string {
  let last: { atMs: number; message: string } | null = null;
  for (const p of cluster.processes) {
    for (const r of p.reports) if (r.type === 'log' && (!last || r.atMs > last.atMs)) last = r;
  }
  return last ? `; candidates logged: ${JSON.stringify(last.message)}` : '';
}

export { summarize };
