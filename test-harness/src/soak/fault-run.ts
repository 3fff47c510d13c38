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
import { delay } from '../wait-for';
import { FaultCluster, type CandidateSlot, type FaultClusterOptions } from './fault-cluster';
import { RollingDeployment, type RolloutReport } from './rolling-deployment';
import { ENSEMBLE_ELECTION_MS, zookeeperSessionTimeoutMs, type FaultBackendKind, type FaultEnvironment, type FaultTopology } from './fault-environment';

/**
 * The fault catalogue.
 * - `kill`: SIGKILL of a candidate (the leader 70 % of the time); a new process with a new id
 *   takes its slot after 0–500 ms.
 * - `freeze`: SIGSTOP then SIGCONT (a GC pause): 1.1–2 × lease (past the lease), or 0.2–0.6 ×
 *   lease (within it: nothing should change).
 * - `partition`: the candidate's proxy drops every byte both ways, sockets open (silent
 *   partition), 0.5–2.5 × lease; the other candidates still reach the server.
 * - `cut`: the candidate's connections are reset and refused for 0.1–1.5 s.
 * - `delay`: 20 ms – lease/3 of latency on the candidate's link, both ways, for 1–4 s.
 * - `server-restart`: SIGKILL of one private server, down 0.2–2 s, started again on the same
 *   port (with its data, or empty where the topology has no persistence). With several servers:
 *   one of them (a minority); in an ensemble its leader 60 % of the time.
 * - `server-pause`: SIGSTOP of one server for 0.3–1.5 × lease (MariaDB and Redis only).
 * - `step-down`: the leader is told to step down (a graceful hand-over).
 * - `link` (several servers): one candidate's link to one server blackholed or cut (half each),
 *   0.5–2.5 × lease, its links to the others untouched; in an ensemble, the server its client
 *   is connected to.
 * - `isolate` (ensemble, when the launcher can): one server cut from its peers (silently or by
 *   resets, half each) while its clients still reach it, 0.3–1.2 × (the ensemble's election
 *   time + the session timeout); the server the leader's client uses 60 % of the time.
 * - `blip` (several servers; drawn on `migrate`): every candidate's link to one server
 *   blackholed or cut (half each) for 1.5–2.5 s, one side of a migration at a time; the server
 *   itself runs on.
 */
export type FaultKind = 'kill' | 'freeze' | 'partition' | 'cut' | 'delay' | 'server-restart' | 'server-pause' | 'step-down' | 'link' | 'isolate' | 'blip';
export const FAULT_KINDS: readonly FaultKind[] = [
  'kill',
  'freeze',
  'partition',
  'cut',
  'delay',
  'server-restart',
  'server-pause',
  'step-down',
  'link',
  'isolate',
  'blip',
];

export const DEFAULT_FAULT_WEIGHTS: Readonly<Record<FaultKind, number>> = {
  kill: 12,
  freeze: 16,
  partition: 16,
  cut: 12,
  delay: 12,
  'server-restart': 6,
  'server-pause': 6,
  'step-down': 8,
  // Drawn only where the topology has several servers (see `weightsFor`).
  link: 14,
  isolate: 8,
  // Drawn only where a backend asks for it (see `BACKEND_FAULT_WEIGHTS`).
  blip: 0,
};

/**
 * Where a topology exists for its servers' faults, those are drawn more often than on one
 * durable server: a restart that loses the data, a master or ensemble member lost.
 */
export const TOPOLOGY_FAULT_WEIGHTS: Readonly<Record<FaultTopology, Partial<Record<FaultKind, number>>>> = {
  single: {},
  'duplicate-id': {},
  'no-persistence': { 'server-restart': 40 },
  quorum: { 'server-restart': 16, 'server-pause': 10 },
  ensemble: { 'server-restart': 10, isolate: 18, link: 18 },
};

/**
 * A backend whose run is about something narrower than the whole catalogue. `migrate`: a rolling
 * migration (a step in every episode, see `RollingDeployment`) with random SIGKILLs and blips of
 * either side.
 */
export const BACKEND_FAULT_WEIGHTS: Readonly<Partial<Record<FaultBackendKind, Record<FaultKind, number>>>> = {
  migrate: {
    kill: 4,
    blip: 6,
    freeze: 0,
    partition: 0,
    cut: 0,
    delay: 0,
    'server-restart': 0,
    'server-pause': 0,
    'step-down': 0,
    link: 0,
    isolate: 0,
  },
};

/** The catalogue's weights for the topology, minus the faults the environment cannot inflict. */
function weightsFor(env: FaultEnvironment, overrides: Partial<Record<FaultKind, number>> | undefined): Record<FaultKind, number> {
  const weights: Record<FaultKind, number> = {
    ...DEFAULT_FAULT_WEIGHTS,
    ...TOPOLOGY_FAULT_WEIGHTS[env.topology],
    ...BACKEND_FAULT_WEIGHTS[env.kind],
    ...overrides,
  };
  if (!env.servers.some((s) => s.pause)) weights['server-pause'] = 0;
  if (env.servers.length < 2) weights.link = weights.blip = 0;
  if (!env.isolateServer) weights.isolate = 0;
  return weights;
}

export interface FaultRunOptions extends Omit<FaultClusterOptions, 'label'> {
  backend: FaultBackendKind;
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

export interface FaultRecord {
  kind: FaultKind;
  /** The candidate process (`<id>@<pid>`), `server <i>`, or `<process> → server <i>` for a link. */
  target: string;
  atMs: number;
  /** How long the fault lasted, ms. */
  holdMs: number;
  /** Whether the target was the leader when the fault began. */
  onLeader: boolean;
}

export interface FaultRunResult {
  backend: FaultBackendKind;
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

interface PlannedFault {
  kind: FaultKind;
  /** 'leader' (if one leads when it starts, else a random slot), a slot index, or the server. */
  target: 'leader' | number | 'server';
  /**
   * Which server a server fault hits, or which link a `link` fault cuts: an index, or
   * `ensemble-leader` / `client's` (resolved when the fault starts: the ensemble's leader, the
   * server the target's client is connected to).
   */
  server: number | 'ensemble-leader' | "client's";
  /** `link`: blackhole (else cut). */
  blackhole: boolean;
  offsetMs: number;
  holdMs: number;
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
  const cluster = await FaultCluster.start({ ...options, label: `${options.backend}-${topology}-${options.seed}` });
  const leaseMs = cluster.leaseMs;
  const weights = weightsFor(cluster.env, options.weights);
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
      const waited = await cluster.waitForLeader(recoveryBoundMs + 10_000);
      if (waited === null) log(`episode ${episodes} (${label}): no leader ${Math.round(recoveryBoundMs + 10_000)} ms after healing (${cluster.describeSlots()})`);
      await delay(rng.int(100, 800));
      if (monotonicMs() - lastProgress > 30_000) {
        lastProgress = monotonicMs();
        const steps = rollout ? `, ${rolloutLine(rollout.report())}` : '';
        log(`${options.backend} ${topology}: ${Math.round((lastProgress - started) / 1000)} s, ${faults.length} faults, ${episodes} episodes${steps}`);
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
    dumpedTo = options.dumpPath ?? join(tmpdir(), `conclave-faults-${options.backend}-${topology}-${options.seed}.json`);
    try {
      writeFileSync(dumpedTo, JSON.stringify(
          {
            options: { ...options, signal: undefined, log: undefined },
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
    backend: options.backend,
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

/** Every random choice of an episode is drawn here, up front, so a seed fixes the schedule. */
function planEpisode(rng: Prng, weights: Record<FaultKind, number>, slots: number, env: FaultEnvironment, leaseMs: number): PlannedFault[] {
  const servers = env.servers.length;
  const count = rng.weighted({ one: 6, two: 3, three: 1 } as const);
  const n = count === 'one' ? 1 : count === 'two' ? 2 : 3;
  const plan: PlannedFault[] = [];
  let serverFault = false;
  let leaderTaken = false;
  const usedSlots = new Set<number>();
  for (let i = 0; i < n; i++) {
    const available = { ...weights };
    if (serverFault) {
      // One server fault at a time: a quorum or an ensemble keeps its majority.
      available['server-restart'] = 0;
      available['server-pause'] = 0;
      available.isolate = 0;
      available.blip = 0;
    }
    const kind = rng.weighted(available);
    const offsetMs = i === 0 ? 0 : rng.int(0, Math.round(leaseMs / 2));
    const holdMs = holdFor(kind, rng, leaseMs);
    // Where there are several servers, which one (and how a link fails) is drawn for every
    // fault, so the seed fixes the schedule; one server draws nothing more (older seeds replay).
    let server: PlannedFault['server'] = 0;
    let blackhole = true;
    let aim = false;
    if (servers > 1) {
      server = rng.int(0, servers - 1);
      blackhole = rng.chance(0.5);
      aim = rng.chance(0.6);
    }
    const ensemble = env.topology === 'ensemble';
    if (kind === 'server-restart' && ensemble && aim) server = 'ensemble-leader';
    if (kind === 'link' && ensemble) server = "client's";
    let target: PlannedFault['target'];
    if (kind === 'isolate' && aim && !leaderTaken) {
      // The server the leader's client uses, cut from its peers.
      serverFault = true;
      leaderTaken = true;
      server = "client's";
      target = 'leader';
    } else if (kind === 'server-restart' || kind === 'server-pause' || kind === 'isolate' || kind === 'blip') {
      serverFault = true;
      target = 'server';
    } else if (!leaderTaken && (kind === 'step-down' || rng.chance(0.7))) {
      leaderTaken = true;
      target = 'leader';
    } else {
      const free = [...Array(slots).keys()].filter((s) => !usedSlots.has(s));
      if (free.length === 0 || kind === 'step-down') continue;
      target = rng.pick(free);
      usedSlots.add(target);
    }
    plan.push({ kind, target, server, blackhole, offsetMs, holdMs });
  }
  return plan;
}

function holdFor(kind: FaultKind, rng: Prng, leaseMs: number): number {
  switch (kind) {
    case 'kill':
      return rng.int(0, 500);
    case 'freeze':
      return rng.chance(0.75) ? Math.round(leaseMs * rng.between(1.1, 2)) : Math.round(leaseMs * rng.between(0.2, 0.6));
    case 'partition':
      return Math.round(leaseMs * rng.between(0.5, 2.5));
    case 'cut':
      return rng.int(100, 1500);
    case 'delay':
      return rng.int(1000, 4000);
    case 'server-restart':
      return rng.int(200, 2000);
    case 'server-pause':
      return Math.round(leaseMs * rng.between(0.3, 1.5));
    case 'step-down':
      return 0;
    case 'link':
      return Math.round(leaseMs * rng.between(0.5, 2.5));
    case 'isolate':
      // Up to past the time the others take to give the member up and elect without it.
      return Math.round((ENSEMBLE_ELECTION_MS + zookeeperSessionTimeoutMs(leaseMs)) * rng.between(0.3, 1.2));
    case 'blip':
      return rng.int(1500, 2500);
  }
}

/** Latency of a `delay` fault, drawn when it starts (the schedule's other draws are fixed). */
function latencyFor(rng: Prng, leaseMs: number): number {
  return rng.int(20, Math.round(leaseMs / 3));
}

async function runFault(cluster: FaultCluster, f: PlannedFault, rng: Prng, record: FaultRecord[]): Promise<void> {
  const latency = f.kind === 'delay' ? latencyFor(rng, cluster.leaseMs) : 0;
  if (f.offsetMs > 0) await delay(f.offsetMs);
  let slot: CandidateSlot | null = null;
  let onLeader = false;
  if (f.target === 'leader') {
    slot = cluster.leader();
    onLeader = slot !== null;
    if (!slot) {
      if (f.kind === 'step-down') return;
      // Nobody leads at this instant: hit a candidate that is not already under a fault.
      slot = cluster.slots.find((s) => !s.frozen && !s.restarting) ?? cluster.slots[0]!;
    }
  } else if (typeof f.target === 'number') {
    slot = cluster.slots[f.target]!;
    onLeader = cluster.leadingNow(slot);
  }
  if (slot && (slot.frozen || slot.restarting)) return; // another fault of this episode froze or killed it
  const server = await resolveServer(cluster, f, slot);
  // A rolling step may have taken the slot meanwhile.
  if (slot && (slot.frozen || slot.restarting)) return;
  const atMs = monotonicMs();
  const label = cluster.env.servers[server]?.label;
  const serverName = label ? `server ${server} (${label})` : `server ${server}`;
  const target =
    f.kind === 'link' ? `${slot!.proc.key} → ${serverName}` : f.target === 'server' || f.kind === 'isolate' ? serverName : slot!.proc.key;
  record.push({ kind: f.kind, target, atMs, holdMs: f.holdMs, onLeader });
  const env = cluster.env;
  switch (f.kind) {
    case 'kill':
      slot!.restarting = true;
      slot!.proc.kill('SIGKILL');
      await slot!.proc.waitForExit();
      await delay(f.holdMs);
      await cluster.spawn(slot!);
      return;
    case 'freeze': {
      const proc = slot!.proc;
      slot!.frozen = true;
      proc.freeze();
      await delay(f.holdMs);
      proc.thaw();
      if (slot!.proc === proc) slot!.frozen = false;
      return;
    }
    case 'partition':
      slot!.proxy.blackhole();
      await delay(f.holdMs);
      slot!.proxy.resume();
      return;
    case 'cut':
      slot!.proxy.cut();
      await delay(f.holdMs);
      slot!.proxy.resume();
      return;
    case 'delay':
      slot!.proxy.delay(latency);
      await delay(f.holdMs);
      slot!.proxy.delay(0);
      return;
    case 'server-restart':
      await env.servers[server]!.kill();
      await delay(f.holdMs);
      await env.servers[server]!.restart();
      return;
    case 'server-pause': {
      const paused = env.servers[server]!.pause ? env.servers[server]! : env.servers.find((s) => s.pause)!;
      await paused.pause!();
      await delay(f.holdMs);
      paused.resume!();
      return;
    }
    case 'link': {
      const link = slot!.links[server]!;
      if (f.blackhole) link.blackhole();
      else link.cut();
      await delay(f.holdMs);
      link.resume();
      return;
    }
    case 'isolate':
      env.isolateServer!(server, f.blackhole ? 'silent' : 'cut');
      await delay(f.holdMs);
      env.healServers!();
      return;
    case 'blip': {
      // Every slot's link to that server, so a process started meanwhile meets the blip too.
      const links = cluster.slots.map((s) => s.links[server]!);
      for (const link of links) {
        if (f.blackhole) link.blackhole();
        else link.cut();
      }
      await delay(f.holdMs);
      for (const link of links) link.resume();
      return;
    }
    case 'step-down':
      slot!.proc.send({ type: 'stepDown' });
      return;
  }
}

/** The server a server or link fault hits, resolved when it starts. */
async function resolveServer(cluster: FaultCluster, f: PlannedFault, slot: CandidateSlot | null): Promise<number> {
  if (f.server === 'ensemble-leader') return (await cluster.env.ensembleLeader?.()) ?? 0;
  if (f.server === "client's") {
    // The server whose proxy carries the candidate's connection (a ZooKeeper client uses one).
    const used = slot ? slot.links.findIndex((l) => l.openConnections() > 0) : -1;
    return used >= 0 ? used : 0;
  }
  return f.server;
}

/** The one summary line of a run (soak output, test failure messages). */
export function summarizeRun(r: FaultRunResult): string {
  const kinds = FAULT_KINDS.filter((k) => r.faultCounts[k] > 0)
    .map((k) => `${k} ${r.faultCounts[k]}${k === 'blip' ? ` [${countBy(r.faults.filter((f) => f.kind === k).map((f) => f.target))}]` : ''}`)
    .join(', ');
  const g = r.report.guard;
  const stale = g ? g.staleWrites.length + g.sharedTokens.length : 0;
  return [
    `${r.backend}${r.topology === 'single' ? '' : ` ${r.topology}`}: ${Math.round(r.elapsedMs / 1000)} s, seed ${r.seed}, lease ${r.leaseMs} ms`,
    `faults: ${r.faults.length} (${kinds}) in ${r.episodes} episodes`,
    ...(r.rollout ? [rolloutLine(r.rollout), `migration conflicts: ${r.migrationConflicts}`] : []),
    `terms: ${r.report.intervals.length}`,
    `overlaps: ${r.report.overlaps.length}`,
    `token regressions: ${r.report.tokenRegressions.length}`,
    `stale work: ${r.report.staleWork.length}`,
    `work outside term: ${r.report.workOutsideTerm.length}`,
    `writes accepted: ${g?.accepted ?? 0}, rejected: ${g?.rejected ?? 0}, failed: ${g?.failed ?? 0}`,
    `stale writes: ${stale}`,
    `late recoveries: ${r.recovery.late.length} (max ${Math.round(r.recovery.maxRecoveryMs)} ms)`,
    `followers seeing themselves lead: ${r.selfLeaderFollowers.length}`,
    r.ok ? 'OK' : `FAILED: ${r.problems.join('; ')}${r.dumpedTo ? ` (history in ${r.dumpedTo})` : ''}`,
  ].join(', ');
}

/** `a 3, b 1`: how many times each value occurs, in order of first occurrence. */
function countBy(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
}

/** `rolling steps: 40 (old→dual 10, …), 2 cycles, 1 put off`. */
function rolloutLine(r: RolloutReport): string {
  return `rolling steps: ${r.steps} (${countBy(r.rolls.map((x) => `${x.from}→${x.to}`))}), ${r.cycles} cycles, ${r.deferred} put off`;
}

export { summarize };
