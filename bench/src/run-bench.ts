/**
 * `npm run bench [-- --quick] [--backend <kinds of the workspace kits that start a bench server (bench-kits.ts), comma-separated>] [--peers[=a,b]] [--rounds N] [--only a,b] [--note TEXT]`
 *
 * Runs the scenarios described in bench/README.md against real
 * servers on loopback with real candidate processes, prints one table per backend and a
 * side-by-side table, and writes bench/results/latest.json, then latest.md and latest.svg from
 * it (`npm run bench:report` makes those two again from the JSON). See bench/README.md.
 */
import { cpus, loadavg, totalmem, type as osType, release as osRelease } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { backendKinds, startTarget, type BackendKind, type BenchTarget, type SystemKind } from './servers';
import { PEER_KINDS, startPeerTarget, type PeerKind } from './peers/peer-targets';
import { isPeer } from './peers/peer-kinds';
import { frozenLeader, handover, silentPartition, steadyState, type BenchSettings } from './scenarios';
import { manyElections, startLoneLeader } from './many-elections';
import type { BackendResult, ResultsFile, RunPlan } from './results-types';
import { benchCommand, resultsMarkdown } from './results-markdown';
import { writeResults } from './report-files';
import { bounded, cleanupAll, installExitHandlers, nowMs, round } from './util';

const SCENARIOS = ['graceful', 'crash', 'frozen', 'partition', 'steady', 'many'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Args {
  quick: boolean;
  backends: BackendKind[];
  /** Peers run in the same run after conclave's backends (`--peers`: all of them). */
  peers: PeerKind[];
  rounds: number | null;
  only: Scenario[];
  out: string | null;
  /** Kept in the results: what to know when reading them (e.g. other work ran meanwhile). */
  note: string | null;
}

/** `argv`, the backends checked against `kinds` (the bench's backends, in order). */
function parseArgs(argv: string[], kinds: readonly BackendKind[]): Args {
  const args: Args = { quick: false, backends: [], peers: [], rounds: null, only: [], out: null, note: null };
  let noBackends = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') args.quick = true;
    else if (a.startsWith('--backend')) {
      for (const b of value().split(',')) {
        // `none`: no conclave backend (a run of peers only).
        if (b === 'none') {
          noBackends = true;
          continue;
        }
        if (!kinds.includes(b)) throw new Error(`unknown backend ${b} (${kinds.join(', ')})`);
        if (!args.backends.includes(b as BackendKind)) args.backends.push(b as BackendKind);
      }
    } else if (a === '--peers') args.peers = [...PEER_KINDS];
    else if (a.startsWith('--peers=')) {
      for (const b of value().split(',')) {
        if (!(PEER_KINDS as readonly string[]).includes(b)) throw new Error(`unknown peer ${b} (${PEER_KINDS.join(', ')})`);
        if (!args.peers.includes(b as PeerKind)) args.peers.push(b as PeerKind);
      }
    } else if (a.startsWith('--rounds')) {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new Error('--rounds takes an integer 1..10000');
      args.rounds = n;
    } else if (a.startsWith('--only')) {
      for (const sc of value().split(',')) {
        if (!(SCENARIOS as readonly string[]).includes(sc)) throw new Error(`unknown scenario ${sc} (${SCENARIOS.join(', ')})`);
        args.only.push(sc as Scenario);
      }
    } else if (a.startsWith('--out')) args.out = value();
    else if (a.startsWith('--note')) args.note = value();
    else if (a === '--help' || a === '-h') {
      console.log(`npm run bench -- [--quick] [--backend ${kinds.join('|')}[,…]]… [--peers[=mysql-row,zk-recipe,redlock,etcd3]] [--rounds N] [--only graceful,crash,frozen,partition,steady,many] [--out DIR] [--note TEXT]`);
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (args.backends.length === 0 && !noBackends) args.backends = [...kinds];
  if (args.only.length === 0) args.only = [...SCENARIOS];
  return args;
}

function plan(args: Args): RunPlan {
  // Quick: sized so that every backend and every peer fit in 10 minutes on 2 loaded cores; the
  // full run is the record (one frozen or partitioned round here only shows the scenario works).
  const p: RunPlan = args.quick
    ? { graceful: 12, crash: 3, frozen: 1, partition: 1, steadyWindowMs: 3000, steadyManyElections: 100, manyElections: 1000, manyWindowMs: 5000, limitMs: 10 * 60_000 }
    : { graceful: 100, crash: 20, frozen: 5, partition: 5, steadyWindowMs: 20_000, steadyManyElections: 1000, manyElections: 10_000, manyWindowMs: 60_000, limitMs: 120 * 60_000 };
  if (args.rounds !== null) {
    p.graceful = p.crash = p.frozen = p.partition = args.rounds;
    p.limitMs = Math.max(p.limitMs, args.rounds * 3 * 4 * 12_000);
  }
  // Each peer adds a server and the scenarios but many elections: a few minutes more (quick).
  p.limitMs += args.peers.length * (args.quick ? 3 : 20) * 60_000;
  return p;
}

/** The commit the bench runs from, or null outside a git checkout. */
function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: __dirname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
  } catch {
    return null;
  }
}

// ---- main ------------------------------------------------------------------------------------

async function runBackend(kind: SystemKind, args: Args, p: RunPlan, s: BenchSettings): Promise<BackendResult> {
  const started = nowMs();
  s.log(`\n== ${isPeer(kind) ? `peer ${kind}` : kind} ==`);
  const target: BenchTarget = isPeer(kind) ? await startPeerTarget(kind, s.leaseMs) : await startTarget(kind, s.leaseMs);
  const serverVersion = await bounded(target.version(), 10_000, 'server version').catch((err: unknown) => `unknown (${(err as Error).message})`);
  s.log(`  server: ${target.description}, ${serverVersion}`);
  const r: BackendResult = {
    kind,
    server: target.description,
    serverVersion,
    counters: target.counterName,
    ...(target.followerAllowance ? { followerTarget: { ...target.followerAllowance } } : {}),
    errors: [],
    wallMs: 0,
  };
  const step = async (name: Scenario, fn: () => Promise<void>) => {
    if (!args.only.includes(name)) return;
    s.log(`  ${name}…`);
    const t = nowMs();
    try {
      await fn();
    } catch (err) {
      r.errors.push(`${name}: ${(err as Error).message}`);
      s.log(`  ${name} FAILED: ${(err as Error).stack ?? String(err)}`);
    }
    s.log(`  ${name} done in ${((nowMs() - t) / 1000).toFixed(1)} s`);
  };
  try {
    await step('graceful', async () => void (r.graceful = await handover(target, 'SIGTERM', p.graceful, s)));
    await step('crash', async () => void (r.crash = await handover(target, 'SIGKILL', p.crash, s)));
    await step('frozen', async () => void (r.frozen = await frozenLeader(target, p.frozen, s)));
    await step('partition', async () => void (r.partition = await silentPartition(target, p.partition, s)));
    await step('steady', async () => {
      // Many elections in one process is conclave's own harness; the peers run the first two phases.
      r.steady = await steadyState(
        target,
        p.steadyWindowMs,
        p.steadyManyElections,
        s,
        isPeer(kind) ? null : (url, count) => startLoneLeader(url, count, s),
      );
    });
    if (!isPeer(kind)) {
      await step('many', async () => {
        r.many = await manyElections(target, p.manyElections, p.manyWindowMs, args.quick, s);
      });
    }
  } finally {
    await target.close().catch(() => undefined);
  }
  r.wallMs = Math.round(nowMs() - started);
  return r;
}

async function main(): Promise<void> {
  installExitHandlers();
  const args = parseArgs(process.argv.slice(2), await backendKinds());
  const p = plan(args);
  const leaseMs = 3000;
  const s: BenchSettings = { leaseMs, candidates: 3, log: (line) => console.log(line) };
  const startedAt = new Date();
  const t0 = nowMs();
  const watchdog = setTimeout(() => {
    console.error(`bench: whole run exceeded ${p.limitMs / 1000} s; aborting`);
    void cleanupAll().finally(() => process.exit(2));
  }, p.limitMs);
  watchdog.unref();

  const machine = {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    os: `${osType()} ${osRelease()}`,
    memGiB: round(totalmem() / 2 ** 30, 1),
    loadavgAtStart: loadavg().map((x) => round(x, 2)),
  };
  console.log(`conclave bench — ${args.quick ? 'QUICK' : 'full'} run, ${startedAt.toISOString()}`);
  console.log(`machine: ${machine.nproc} × ${machine.cpuModel}, node ${machine.node}, ${machine.os}, load ${machine.loadavgAtStart.join(' ')}`);
  console.log(`plan: ${JSON.stringify(p)}`);

  const results: BackendResult[] = [];
  for (const kind of [...args.backends, ...args.peers]) {
    try {
      results.push(await runBackend(kind, args, p, s));
    } catch (err) {
      results.push({ kind, server: 'did not start', counters: '', errors: [`server: ${(err as Error).message}`], wallMs: 0 });
    }
  }
  const wallMs = Math.round(nowMs() - t0);
  const loadAtEnd = loadavg().map((x) => round(x, 2));

  const argv = process.argv.slice(2);
  const file: ResultsFile = {
    date: startedAt.toISOString(),
    command: benchCommand(argv),
    argv,
    commit: gitCommit(),
    note: args.note,
    quick: args.quick,
    wallMs,
    machine: { ...machine, loadavgAtEnd: loadAtEnd },
    leaseMs,
    plan: p,
    peers: args.peers,
    results,
  };
  console.log(`\n${resultsMarkdown(file)}`);
  const dir = args.out ?? join(__dirname, '..', 'results');
  const written = writeResults(file, dir, 'latest');
  console.log(`\nwritten: ${written.join(', ')}`);
  clearTimeout(watchdog);
  await cleanupAll();
}

main().catch(async (err: unknown) => {
  console.error(err);
  await cleanupAll();
  process.exit(1);
});
