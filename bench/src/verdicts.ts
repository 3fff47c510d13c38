/**
 * Each system's rows (what is measured, the target, the figures, met or MISSED) and the tables
 * made of them, computed from a result alone so that the report can redo them from a file.
 */
import type { BackendResult } from './results-types';
import { round } from './util';
import { MANY_NODE_FLAGS } from './scenario-settings';

export type Verdict = 'met' | 'MISSED' | 'n/a';
export interface Row {
  scenario: string;
  measured: string;
  target: string;
  result: string;
  verdict: Verdict;
  note?: string;
}

/** Graceful hand-over, ms: near the loopback limit of one release, one notification and one campaign round trip. */
const GRACEFUL_P50_MS = 5;
const GRACEFUL_P99_MS = 15;
/** Crash take-over beyond the lease the killed leader still had on the server, p99, ms. */
const CRASH_OVERHEAD_P99_MS = 50;
/** Many elections: CPU of one core per process, %. */
const MANY_CPU_PERCENT = 10;
/** Many elections: memory each election adds to its process (RSS beyond the process's own), bytes. */
const MANY_BYTES_PER_ELECTION = 5 * 1024;

const ms = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${round(v, 1)} ms`);

export function rows(r: BackendResult, leaseMs: number): Row[] {
  const out: Row[] = [];
  if (r.graceful) {
    const g = r.graceful.latencyMs;
    const ok = g.n > 0 && r.graceful.failures.length === 0 && g.p50! <= GRACEFUL_P50_MS && g.p99! <= GRACEFUL_P99_MS;
    out.push({
      scenario: 'graceful hand-over',
      measured: 'SIGTERM to the leader → another candidate reports elected',
      target: `p50 ≤ ${GRACEFUL_P50_MS} ms, p99 ≤ ${GRACEFUL_P99_MS} ms`,
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
        target: `p99 ≤ ${CRASH_OVERHEAD_P99_MS} ms`,
        result: `overhead p50 ${ms(over.p50)}, p99 ${ms(over.p99)}; lease left at the kill p50 ${ms(left.p50)} (min ${ms(left.min)}, max ${ms(left.max)}, n=${over.n})`,
        verdict: over.n > 0 && over.n === c.n && over.p99! <= CRASH_OVERHEAD_P99_MS ? 'met' : 'MISSED',
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
        `stale work ${stale} (work after wake ${work}) in ${roundsOf(f.length)}; old token < new token in ${tokensOk}/${roundsOf(f.length)} ` +
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
        `${work} work units after the new election in ${roundsOf(p.length)}; old leader stepped down ` +
        `${margins.length ? `${Math.min(...margins)}–${Math.max(...margins)} ms` : '—'} before it; new leader at ` +
        `${p.map((x) => x.newLeaderElectedMs).join(', ')} ms after the blackhole`,
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  if (r.steady) {
    const s = r.steady;
    // The interval the leader kept (results from before it was recorded: the core's default).
    const renewMs = s.measuredRenewMs ?? s.renewMs;
    const perRenew = (v: number | null) => (v === null ? null : round((v * renewMs) / 1000, 2));
    const leaderRt = perRenew(s.leader.clientSendsPerSec);
    const many = s.manyLeader;
    const manyRt = many ? perRenew(many.clientSendsPerSec) : null;
    const leaderOk = leaderRt !== null && leaderRt <= 1.05 && (many === null || (manyRt !== null && manyRt <= 1.05));
    const fmt = (x: { serverOpsPerSec: number | null; serverReadsPerSec: number | null; clientSendsPerSec: number | null; controlBurstsPerSec?: number | null }) =>
      `server ${x.serverOpsPerSec ?? '—'} ops/s${x.serverReadsPerSec !== null ? `, ${x.serverReadsPerSec} reads/s` : ''}; client ${x.clientSendsPerSec ?? '—'} round trips/s` +
      (x.controlBurstsPerSec ? ` (+ ${x.controlBurstsPerSec}/s HTTP/2 acknowledgements, not counted)` : '');
    out.push({
      scenario: 'steady state: leader',
      measured: `per leader process, renew interval ${renewMs} ms${s.measuredRenewMs ? ' (its renewals, measured)' : ''}: 1 election${many ? `, and ${many.elections} elections in one process` : ''}`,
      target: '≤ 1 round trip per renew interval per process, whatever the number of elections',
      result: `1 election: ${fmt(s.leader)} = ${leaderRt} per renew interval${many ? `; ${many.elections} elections: ${fmt(many)} = ${manyRt} per renew interval` : ''}`,
      verdict: leaderOk ? 'met' : 'MISSED',
    });
    // The backend's kit sets the follower's target (recorded with the results); a backend whose
    // followers poll by design has none.
    const fs = s.follower.clientSendsPerSec;
    const allowed = r.followerTarget;
    const target = allowed?.target ?? 'not targeted (followers poll)';
    const verdict: Verdict = !allowed ? 'n/a' : fs !== null && fs <= allowed.maxPerSec ? 'met' : 'MISSED';
    out.push({ scenario: 'steady state: follower', measured: 'per follower process (2 followers, 1 election)', target, result: fmt(s.follower), verdict });
  }
  if (r.many) {
    const m = r.many;
    const cpuMax = Math.max(...m.perProcess.map((p) => p.cpuPercent ?? Infinity));
    const rss = m.perProcess.map((p) => p.rssMiB).join(' / ');
    const t = m.takeover;
    // Results made before memory per election was measured are judged without it.
    const perElection = m.perProcess.map((p) => p.rssPerElectionBytes);
    const measuredMemory = perElection.some((b) => b !== undefined);
    const memoryOk = !measuredMemory || perElection.every((b) => b !== null && b !== undefined && b <= MANY_BYTES_PER_ELECTION);
    const kb = (b: number | null | undefined) => (b === null || b === undefined ? '—' : `${round(b / 1024, 1)}`);
    const ok =
      m.failures.length === 0 &&
      m.perProcess.length === m.processes &&
      m.leaseExpiredTotal === 0 &&
      cpuMax <= MANY_CPU_PERCENT &&
      memoryOk &&
      t !== null &&
      t.takenOver === t.killedLeading &&
      (t.latencyMs.p99 ?? Infinity) <= leaseMs + 150;
    out.push({
      scenario: `many elections${m.scaledDown ? ' (SCALED DOWN: --quick)' : ''}`,
      measured: `${m.elections} elections × ${m.processes} processes (node ${MANY_NODE_FLAGS.join(' ')}), ${m.windowMs / 1000} s window`,
      target: `10 000 × 3: all renewals on time, ≤ ${MANY_CPU_PERCENT} % of one core and ≤ ${MANY_BYTES_PER_ELECTION / 1024} KiB per election per process, take-over targets hold`,
      result:
        `lease-expired revocations ${m.leaseExpiredInWindow} in window (${m.leaseExpiredTotal} in run); CPU ${m.perProcess.map((p) => `${p.cpuPercent} %`).join(' / ')} of one core; ` +
        `RSS ${rss} MiB` +
        (measuredMemory
          ? ` (per election beyond the process's own: RSS ${m.perProcess.map((p) => kb(p.rssPerElectionBytes)).join(' / ')} KiB, heap ${m.perProcess.map((p) => kb(p.heapPerElectionBytes)).join(' / ')} KiB)`
          : '') +
        `; leading ${m.perProcess.map((p) => p.leading).join(' / ')}; settled in ${m.settleMs ?? '—'} ms` +
        (t ? `; SIGKILL of the process leading ${t.killedLeading}: ${t.takenOver} taken over, p50 ${ms(t.latencyMs.p50)}, p99 ${ms(t.latencyMs.p99)}` : '') +
        (m.failures.length ? `; FAILED: ${m.failures.join('; ')}` : ''),
      verdict: ok ? 'met' : 'MISSED',
    });
  }
  for (const e of r.errors) out.push({ scenario: 'error', measured: '', target: '', result: e, verdict: 'MISSED' });
  return out;
}

export function table(rs: Row[], system = 'conclave'): string {
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

/**
 * conclave's backends in columns, one row per scenario. `withReference`: a last column of peer
 * figures measured on another day, for runs that did not measure the peers themselves.
 */
export function sideBySide(results: BackendResult[], leaseMs: number, withReference = true): string {
  const all = results.map((r) => ({ kind: r.kind, rows: rows(r, leaseMs) }));
  const names = [...new Set(all.flatMap((a) => a.rows.map((r) => r.scenario.replace(/ \(SCALED.*$/, ''))))];
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const short = (r: Row | undefined) => (r ? `${r.verdict === 'met' ? '✔' : r.verdict === 'MISSED' ? '✘' : '·'} ${esc(r.result)}` : '—');
  const cells = (n: string) => all.map((a) => short(a.rows.find((r) => r.scenario.replace(/ \(SCALED.*$/, '') === n)));
  if (!withReference) {
    return [`| scenario | ${all.map((a) => a.kind).join(' | ')} |`, `|---|${all.map(() => '---|').join('')}`, ...names.map((n) => `| ${n} | ${cells(n).join(' | ')} |`)].join('\n');
  }
  return [
    `| scenario | ${all.map((a) => a.kind).join(' | ')} | reference (bench/README.md, 2026-11-21) |`,
    `|---|${all.map(() => '---|').join('')}---|`,
    ...names.map((n) => `| ${n} | ${cells(n).join(' | ')} | ${REFERENCE[n] ?? ''} |`),
  ].join('\n');
}

/** `1 round`, `12 rounds`. */
export function roundsOf(n: number): string {
  return `${n} round${n === 1 ? '' : 's'}`;
}
