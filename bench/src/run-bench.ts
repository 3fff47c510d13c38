/**
 * `npm run bench [-- --quick] [--backend mysql,redis,zookeeper] [--peers[=a,b]] [--rounds N] [--only a,b]`
 *
 * Runs the scenarios described in bench/README.md against real
 * servers on loopback with real candidate processes, prints one table per backend and a
 * side-by-side table, and writes bench/results/latest.{md,json}. See bench/README.md.
 */
import { cpus, loadavg, totalmem, type as osType, release as osRelease } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_KINDS, startTarget, type BackendKind, type BenchTarget, type SystemKind } from './servers';
import { PEER_KINDS, PEER_TITLES, peerUnavailable, startPeerTarget, type PeerKind } from './peers/peer-targets';
import { peerTable } from './peer-table';
import {
  frozenLeader,
  handover,
  silentPartition,
  steadyState,
  type BenchSettings,
  type FrozenResult,
  type HandoverResult,
  type PartitionResult,
  type SteadyResult,
} from './scenarios';
import { manyElections, startLoneLeader, type ManyResult } from './many-elections';
import { cleanupAll, installExitHandlers, nowMs, round } from './util';

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
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, backends: [], peers: [], rounds: null, only: [], out: null };
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
        if (!(BACKEND_KINDS as readonly string[]).includes(b)) throw new Error(`unknown backend ${b} (mysql, redis, zookeeper)`);
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
    else if (a === '--help' || a === '-h') {
      console.log('npm run bench -- [--quick] [--backend mysql|redis|zookeeper[,…]]… [--peers[=mysql-row,zk-recipe,redlock,etcd3]] [--rounds N] [--only graceful,crash,frozen,partition,steady,many] [--out DIR]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (args.backends.length === 0 && !noBackends) args.backends = [...BACKEND_KINDS];
  if (args.only.length === 0) args.only = [...SCENARIOS];
  return args;
}

interface Plan {
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

function plan(args: Args): Plan {
  const p: Plan = args.quick
    ? { graceful: 15, crash: 3, frozen: 2, partition: 2, steadyWindowMs: 4000, steadyManyElections: 100, manyElections: 1000, manyWindowMs: 8000, limitMs: 10 * 60_000 }
    : { graceful: 100, crash: 20, frozen: 5, partition: 5, steadyWindowMs: 20_000, steadyManyElections: 1000, manyElections: 10_000, manyWindowMs: 60_000, limitMs: 120 * 60_000 };
  if (args.rounds !== null) {
    p.graceful = p.crash = p.frozen = p.partition = args.rounds;
    p.limitMs = Math.max(p.limitMs, args.rounds * 3 * 4 * 12_000);
  }
  // Each peer adds a server and the scenarios but many elections: a few minutes more (quick).
  p.limitMs += args.peers.length * (args.quick ? 3 : 20) * 60_000;
  return p;
}

export interface BackendResult {
  kind: SystemKind;
  server: string;
  counters: string;
  graceful?: HandoverResult;
  crash?: HandoverResult;
  frozen?: FrozenResult;
  partition?: PartitionResult;
  steady?: SteadyResult;
  many?: ManyResult;
  errors: string[];
  wallMs: number;
}

// ---- verdicts ------------------------------------------------------------------------------

type Verdict = 'met' | 'MISSED' | 'n/a';
interface Row {
  scenario: string;
  measured: string;
  target: string;
  result: string;
  verdict: Verdict;
  note?: string;
}

const ms = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${round(v, 1)} ms`);

function rows(r: BackendResult, leaseMs: number): Row[] {
  const out: Row[] = [];
  const renewMs = Math.floor(leaseMs / 3);
  if (r.graceful) {
    const g = r.graceful.latencyMs;
    const ok = g.n > 0 && r.graceful.failures.length === 0 && g.p50! <= 20 && g.p99! <= 50;
    out.push({
      scenario: 'graceful hand-over',
      measured: 'SIGTERM to the leader → another candidate reports elected',
      target: 'p50 ≤ 20 ms, p99 ≤ 50 ms',
      result: `p50 ${ms(g.p50)}, p99 ${ms(g.p99)} (max ${ms(g.max)}, n=${g.n}${r.graceful.failures.length ? `, ${r.graceful.failures.length} failed` : ''})`,
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  if (r.crash) {
    const c = r.crash.latencyMs;
    const ok = c.n > 0 && r.crash.failures.length === 0 && c.p99! <= leaseMs + 150;
    out.push({
      scenario: 'crash take-over',
      measured: 'SIGKILL to the leader → another candidate reports elected',
      target: `p99 ≤ leaseMs + 150 = ${leaseMs + 150} ms`,
      result: `p50 ${ms(c.p50)}, p99 ${ms(c.p99)} (min ${ms(c.min)}, n=${c.n}${r.crash.failures.length ? `, ${r.crash.failures.length} failed` : ''})`,
      verdict: ok ? 'met' : 'MISSED',
    });
    const left = r.crash.leaseLeftMs;
    const over = r.crash.overheadMs;
    if (left && over) {
      out.push({
        scenario: 'crash take-over: overhead',
        measured: "take-over time beyond the lease the killed leader still had on the server (its last confirmed renewal's send + lease granted − kill)",
        target: 'p99 ≤ 50 ms',
        result: `overhead p50 ${ms(over.p50)}, p99 ${ms(over.p99)}; lease left at the kill p50 ${ms(left.p50)} (min ${ms(left.min)}, max ${ms(left.max)}, n=${over.n})`,
        verdict: over.n > 0 && over.n === c.n && over.p99! <= 50 ? 'met' : 'MISSED',
      });
    }
  }
  if (r.frozen) {
    const f = r.frozen.rounds;
    const stale = f.reduce((a, x) => a + x.staleWorkAfterWake, 0);
    const work = f.reduce((a, x) => a + x.workAfterWake, 0);
    const rejected = f.reduce((a, x) => a + x.guardRejected, 0);
    const tokensOk = f.filter((x) => x.tokenWouldBeRejected).length;
    const revokedMs = f.map((x) => x.revokedReportAfterWakeMs).filter((x): x is number => x !== null);
    const ok = f.length > 0 && r.frozen.failures.length === 0 && stale === 0 && tokensOk === f.length && rejected === stale;
    out.push({
      scenario: 'frozen leader',
      measured: `leader SIGSTOPped ${r.frozen.freezeMs} ms, then SIGCONT: its work after waking; its token at a guarded resource`,
      target: '0 stale work after waking; token rejected 100 %',
      result:
        `stale work ${stale} (work after wake ${work}) in ${f.length} rounds; old token < new token in ${tokensOk}/${f.length} rounds ` +
        `→ guard rejects ${f.length ? Math.round((tokensOk / f.length) * 100) : 0} %` +
        (stale ? `, stale units rejected ${rejected}/${stale}` : '') +
        `; revoked reported ${revokedMs.length ? `${Math.min(...revokedMs)}–${Math.max(...revokedMs)} ms` : '—'} after SIGCONT (isLeader() false before)`,
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  if (r.partition) {
    const p = r.partition.rounds;
    const work = p.reduce((a, x) => a + x.workAfterNewLeader, 0);
    const margins = p.map((x) => x.marginMs).filter((x): x is number => x !== null);
    const ok = p.length > 0 && r.partition.failures.length === 0 && work === 0;
    out.push({
      scenario: 'silent partition',
      measured: "leader's connection blackholed (no reset) → its work after the new leader's election",
      target: "0 work after the new leader's election",
      result:
        `${work} work units after the new election in ${p.length} rounds; old leader stepped down ` +
        `${margins.length ? `${Math.min(...margins)}–${Math.max(...margins)} ms` : '—'} before it; new leader at ` +
        `${p.map((x) => x.newLeaderElectedMs).join(', ')} ms after the blackhole`,
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  if (r.steady) {
    const s = r.steady;
    const perRenew = (v: number | null) => (v === null ? null : round((v * renewMs) / 1000, 2));
    const leaderRt = perRenew(s.leader.clientSendsPerSec);
    const many = s.manyLeader;
    const manyRt = many ? perRenew(many.clientSendsPerSec) : null;
    const leaderOk = leaderRt !== null && leaderRt <= 1.05 && (many === null || (manyRt !== null && manyRt <= 1.05));
    const fmt = (x: { serverOpsPerSec: number | null; serverReadsPerSec: number | null; clientSendsPerSec: number | null }) =>
      `server ${x.serverOpsPerSec ?? '—'} ops/s${x.serverReadsPerSec !== null ? `, ${x.serverReadsPerSec} reads/s` : ''}; client ${x.clientSendsPerSec ?? '—'} round trips/s`;
    out.push({
      scenario: 'steady state: leader',
      measured: `per leader process, renew interval ${renewMs} ms: 1 election${many ? `, and ${many.elections} elections in one process` : ''}`,
      target: '≤ 1 round trip per renew interval per process, whatever the number of elections',
      result: `1 election: ${fmt(s.leader)} = ${leaderRt} per renew interval${many ? `; ${many.elections} elections: ${fmt(many)} = ${manyRt} per renew interval` : ''}`,
      verdict: leaderOk ? 'met' : 'MISSED',
    });
    let verdict: Verdict = 'n/a';
    let target = 'no polling on Redis/ZooKeeper (MySQL: not targeted)';
    const fs = s.follower.clientSendsPerSec;
    if (r.kind === 'redis') verdict = fs !== null && fs <= 0.05 ? 'met' : 'MISSED';
    if (r.kind === 'zookeeper') {
      // A ZooKeeper client pings when its connection is idle (node-zookeeper-client: a third of the
      // session timeout; conclave raises it to 45 %, see zookeeper-session.ts): keep-alive, not polling.
      const pings = 3000 / leaseMs;
      target = `no polling (session keep-alive pings ≈ ${pings}/s allowed)`;
      verdict = fs !== null && fs <= pings * 1.15 ? 'met' : 'MISSED';
    }
    out.push({ scenario: 'steady state: follower', measured: 'per follower process (2 followers, 1 election)', target, result: fmt(s.follower), verdict });
  }
  if (r.many) {
    const m = r.many;
    const cpuMax = Math.max(...m.perProcess.map((p) => p.cpuPercent ?? Infinity));
    const rss = m.perProcess.map((p) => p.rssMiB).join(' / ');
    const t = m.takeover;
    const ok =
      m.failures.length === 0 && m.perProcess.length === m.processes && m.leaseExpiredTotal === 0 && cpuMax < 25 && t !== null && t.takenOver === t.killedLeading && (t.latencyMs.p99 ?? Infinity) <= leaseMs + 150;
    out.push({
      scenario: `many elections${m.scaledDown ? ' (SCALED DOWN: --quick)' : ''}`,
      measured: `${m.elections} elections × ${m.processes} processes, ${m.windowMs / 1000} s window`,
      target: '10 000 × 3: all renewals on time, < 25 % of one core per process, take-over targets hold',
      result:
        `lease-expired revocations ${m.leaseExpiredInWindow} in window (${m.leaseExpiredTotal} in run); CPU ${m.perProcess.map((p) => `${p.cpuPercent} %`).join(' / ')} of one core; ` +
        `RSS ${rss} MiB; leading ${m.perProcess.map((p) => p.leading).join(' / ')}; settled in ${m.settleMs ?? '—'} ms` +
        (t ? `; SIGKILL of the process leading ${t.killedLeading}: ${t.takenOver} taken over, p50 ${ms(t.latencyMs.p50)}, p99 ${ms(t.latencyMs.p99)}` : '') +
        (m.failures.length ? `; FAILED: ${m.failures.join('; ')}` : ''),
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  for (const e of r.errors) out.push({ scenario: 'error', measured: '', target: '', result: e, verdict: 'MISSED' });
  return out;
}

function table(rs: Row[], system = 'conclave'): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| scenario | what is measured | target | ${system} | |`,
    '|---|---|---|---|---|',
    ...rs.map((r) => `| ${esc(r.scenario)} | ${esc(r.measured)} | ${esc(r.target)} | ${esc(r.result)} | ${r.verdict} |`),
  ].join('\n');
}

const REFERENCE: Record<string, string> = {
  'graceful hand-over': 'p50: etcd3 23 ms, redlock 84 ms, ZK recipe 7 ms, plain MySQL row 52 ms',
  'crash take-over': 'p50: redlock 2.0 s, etcd3 2.9 s, ZK recipe 3.1 s, plain MySQL row 3.9 s',
  'frozen leader': 'all four: believed leading 1.6–14 ms after waking, 1–2 stale units per freeze',
  'silent partition': "plain MySQL row, redlock, etcd3: ~1 400 stale units each (never noticed); ZK recipe: stepped down in time",
};

function sideBySide(results: BackendResult[], leaseMs: number): string {
  const all = results.map((r) => ({ kind: r.kind, rows: rows(r, leaseMs) }));
  const names = [...new Set(all.flatMap((a) => a.rows.map((r) => r.scenario.replace(/ \(SCALED.*$/, ''))))];
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const short = (r: Row | undefined) => (r ? `${r.verdict === 'met' ? '✔' : r.verdict === 'MISSED' ? '✘' : '·'} ${esc(r.result)}` : '—');
  return [
    `| scenario | ${all.map((a) => a.kind).join(' | ')} | reference (bench/README.md, 2026-11-21) |`,
    `|---|${all.map(() => '---|').join('')}---|`,
    ...names.map(
      (n) => `| ${n} | ${all.map((a) => short(a.rows.find((r) => r.scenario.replace(/ \(SCALED.*$/, '') === n))).join(' | ')} | ${REFERENCE[n] ?? ''} |`,
    ),
  ].join('\n');
}

// ---- main ------------------------------------------------------------------------------------

const isPeer = (kind: SystemKind): kind is PeerKind => (PEER_KINDS as readonly string[]).includes(kind);

async function runBackend(kind: SystemKind, args: Args, p: Plan, s: BenchSettings): Promise<BackendResult> {
  const started = nowMs();
  s.log(`\n== ${isPeer(kind) ? `peer ${kind}` : kind} ==`);
  const target: BenchTarget = isPeer(kind) ? await startPeerTarget(kind, s.leaseMs) : await startTarget(kind, s.leaseMs);
  s.log(`  server: ${target.description}`);
  const r: BackendResult = { kind, server: target.description, counters: target.counterName, errors: [], wallMs: 0 };
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
  const args = parseArgs(process.argv.slice(2));
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
  const skipped: string[] = [];
  for (const kind of [...args.backends, ...args.peers]) {
    const why = isPeer(kind) ? peerUnavailable(kind) : null;
    if (why) {
      console.log(`\n== peer ${kind} == SKIPPED: ${why}`);
      skipped.push(`${kind}: ${why}`);
      continue;
    }
    try {
      results.push(await runBackend(kind, args, p, s));
    } catch (err) {
      results.push({ kind, server: 'did not start', counters: '', errors: [`server: ${(err as Error).message}`], wallMs: 0 });
    }
  }
  const wallMs = Math.round(nowMs() - t0);
  machine.loadavgAtStart = machine.loadavgAtStart; // kept as is
  const loadAtEnd = loadavg().map((x) => round(x, 2));

  const command = `npm run bench --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const md: string[] = [
    `# conclave bench results`,
    '',
    `- date: ${startedAt.toISOString()}`,
    `- command: \`${command}\` (${args.quick ? 'QUICK mode: fewer rounds, shorter windows, many-elections scaled down to ' + p.manyElections + ' elections' : 'full run'})`,
    `- wall time: ${(wallMs / 1000).toFixed(1)} s`,
    `- machine: nproc ${machine.nproc}, ${machine.cpuModel}, ${machine.memGiB} GiB, node ${machine.node}, ${machine.os}; load average ${machine.loadavgAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end (shared machine)`,
    `- lease 3000 ms (renew every 1000 ms, follower retry 600 ms, safety margin 60 ms: core defaults for leaseMs 3000), 3 candidate processes per election, loopback, times from process.hrtime.bigint()`,
    ...(args.peers.length ? [`- peers in this run: ${args.peers.join(', ')} (each on a private server of its own)`] : []),
    `- rounds: graceful ${p.graceful}, crash ${p.crash}, frozen ${p.frozen}, partition ${p.partition}; steady-state windows ${p.steadyWindowMs / 1000} s; many elections ${p.manyElections} × 3 over ${p.manyWindowMs / 1000} s`,
    '',
  ];
  for (const r of results) {
    md.push(`## ${isPeer(r.kind) ? `peer: ${PEER_TITLES[r.kind]}` : r.kind}`, '', `server: ${r.server}. Server counter: ${r.counters}. Wall time ${(r.wallMs / 1000).toFixed(1)} s.`, '');
    md.push(table(rows(r, leaseMs), isPeer(r.kind) ? r.kind : 'conclave'), '');
  }
  const conclaveResults = results.filter((r) => !isPeer(r.kind));
  if (conclaveResults.length) md.push('## side by side', '', sideBySide(conclaveResults, leaseMs), '');
  if (args.peers.length) {
    md.push(
      '## side by side with the peers (same run)',
      '',
      'Each figure with its ratio to the best peer on that row (×1.00 = as good as the best peer; lower is better on every row with a ratio).',
      '',
      peerTable(results, (k) => isPeer(k)),
      '',
      ...skipped.map((x) => `- skipped ${x}`),
      '',
    );
  }
  const text = md.join('\n');
  console.log(`\n${text}`);

  const dir = args.out ?? join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.md'), text);
  writeFileSync(
    join(dir, 'latest.json'),
    `${JSON.stringify({ date: startedAt.toISOString(), command, quick: args.quick, wallMs, machine: { ...machine, loadavgAtEnd: loadAtEnd }, leaseMs, plan: p, results: results.map((r) => ({ ...r, rows: rows(r, leaseMs) })) }, null, 2)}\n`,
  );
  console.log(`\nwritten: ${join(dir, 'latest.md')}, ${join(dir, 'latest.json')}`);
  clearTimeout(watchdog);
  await cleanupAll();
}

main().catch(async (err: unknown) => {
  console.error(err);
  await cleanupAll();
  process.exit(1);
});
