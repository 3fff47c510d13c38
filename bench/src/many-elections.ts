/**
 * The "many elections" scenario: 3 processes, each running N Electors (one per election) on one
 * backend instance — `many-elections-candidate.ts`, forked here.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ManyCommand, ManyConfig, ManyMemory, ManyReport } from './many-elections-candidate';
import type { BenchTarget } from './servers';
import { electionName, type BenchSettings } from './scenarios';
import { MANY_NODE_FLAGS } from './scenario-settings';
import { bounded, nowMs, round, sleep, summarize, trackChild, until, type Summary } from './util';

const SCRIPT = join(__dirname, 'many-elections-candidate.js');

type Stats = Extract<ManyReport, { type: 'stats' }>;

/**
 * Node flags of the candidate processes beyond `MANY_NODE_FLAGS`: `--expose-gc`, so that memory is
 * read after a full collection (young garbage would otherwise count, up to the semi-spaces' size).
 */
const MEASURE_FLAGS = ['--expose-gc'];

export class ManyProcess {
  readonly leading = new Set<number>();
  /** First `elected` per election index after `markMs` (set by the take-over measurement). */
  readonly electedAfterMark = new Map<number, number>();
  markMs = Infinity;
  stats: Stats | null = null;
  readonly errors: string[] = [];
  private statsWaiters: Array<(s: Stats) => void> = [];
  private memoryWaiters: Array<(m: ManyMemory) => void> = [];
  private readonly exited: Promise<void>;
  readyReport: Extract<ManyReport, { type: 'ready' }> | null = null;

  private constructor(readonly child: ChildProcess, readonly config: ManyConfig) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (m: ManyReport) => {
      if (m.type === 'events') {
        for (const [kind, i, atMs] of m.list) {
          if (kind === 'e') {
            this.leading.add(i);
            if (atMs >= this.markMs && !this.electedAfterMark.has(i)) this.electedAfterMark.set(i, atMs);
          } else this.leading.delete(i);
        }
      } else if (m.type === 'stats') {
        this.stats = m;
        const waiters = this.statsWaiters;
        this.statsWaiters = [];
        waiters.forEach((w) => w(m));
      } else if (m.type === 'memory') {
        const waiters = this.memoryWaiters;
        this.memoryWaiters = [];
        waiters.forEach((w) => w(m));
      } else if (m.type === 'ready') this.readyReport = m;
      else if (m.type === 'error') this.errors.push(m.message);
    });
  }

  static start(config: ManyConfig): ManyProcess {
    const child = fork(SCRIPT, [], {
      execArgv: [...process.execArgv, ...MANY_NODE_FLAGS, ...MEASURE_FLAGS],
      env: { ...process.env, CONCLAVE_BENCH_MANY: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    trackChild(child);
    return new ManyProcess(child, config);
  }

  async ready(timeoutMs: number): Promise<void> {
    await until(() => this.readyReport ?? (this.errors.length ? true : undefined), timeoutMs, `${this.config.candidateId} ready`, 20);
    if (this.errors.length) throw new Error(`${this.config.candidateId}: ${this.errors.join('; ')}`);
  }

  /** Fresh stats, asked for now. */
  freshStats(timeoutMs = 10_000): Promise<Stats> {
    const p = new Promise<Stats>((resolve) => this.statsWaiters.push(resolve));
    this.send({ type: 'stats' });
    return bounded(p, timeoutMs, `stats of ${this.config.candidateId}`);
  }

  /** Memory after a full collection, asked for now. */
  memory(timeoutMs = 10_000): Promise<ManyMemory> {
    const p = new Promise<ManyMemory>((resolve) => this.memoryWaiters.push(resolve));
    this.send({ type: 'memory' });
    return bounded(p, timeoutMs, `memory of ${this.config.candidateId}`);
  }

  send(c: ManyCommand): void {
    if (this.child.connected) this.child.send(c);
  }

  async stop(timeoutMs = 20_000): Promise<void> {
    this.send({ type: 'stop' });
    await bounded(this.exited, timeoutMs, 'stop').catch(() => this.kill());
    await this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** One process leading `count` elections alone (steady-state phase C). */
export async function startLoneLeader(url: string, count: number, s: BenchSettings) {
  const p = ManyProcess.start({ backend: url, prefix: electionName('lone'), count, candidateId: 'bench-lone', leaseMs: s.leaseMs });
  const ready = (async () => {
    await p.ready(120_000);
    await until(() => p.leading.size === count, 60_000, `lone leader leading ${count}`, 50);
  })();
  return { ready, stop: () => p.stop() };
}

export interface ManyProcessResult {
  candidateId: string;
  /** Elections led at the start of the window. */
  leading: number;
  /** CPU over the window, % of one core. */
  cpuPercent: number | null;
  rssMiB: number | null;
  heapMiB: number | null;
  /**
   * What each election adds, bytes: RSS and heap after the window (after a full collection)
   * beyond the process's own before it built its Electors, divided by the election count.
   * Absent in results made before it was measured.
   */
  rssPerElectionBytes?: number | null;
  heapPerElectionBytes?: number | null;
  /** Revocations during the window, by reason (`lease-expired` = a renewal not on time). */
  revokedInWindow: Record<string, number>;
  /** Time for all its Electors to know their first outcome, ms. */
  startMs: number | null;
}

export interface ManyResult {
  elections: number;
  processes: number;
  windowMs: number;
  scaledDown: boolean;
  /** Time from fork until every election had exactly one leader, ms. */
  settleMs: number | null;
  perProcess: ManyProcessResult[];
  leaseExpiredInWindow: number;
  /** Total lease-expired revocations over the whole run before the kill. */
  leaseExpiredTotal: number;
  /** SIGKILL of the process leading most elections: per-election time until another leads it. */
  takeover: { killedLeading: number; takenOver: number; latencyMs: Summary } | null;
  failures: string[];
}

/** Memory per election beyond the process's baseline, bytes (null when either was not read). */
function perElection(m: ManyMemory | null, baseline: ManyMemory | null, count: number) {
  if (!m || !baseline) return { rssPerElectionBytes: null, heapPerElectionBytes: null };
  return {
    rssPerElectionBytes: round((m.rssBytes - baseline.rssBytes) / count, 0),
    heapPerElectionBytes: round((m.heapBytes - baseline.heapBytes) / count, 0),
  };
}

export async function manyElections(
  target: BenchTarget,
  count: number,
  windowMs: number,
  scaledDown: boolean,
  s: BenchSettings,
): Promise<ManyResult> {
  const prefix = electionName('many');
  const procs: ManyProcess[] = [];
  const failures: string[] = [];
  const result: ManyResult = {
    elections: count,
    processes: s.candidates,
    windowMs,
    scaledDown,
    settleMs: null,
    perProcess: [],
    leaseExpiredInWindow: 0,
    leaseExpiredTotal: 0,
    takeover: null,
    failures,
  };
  const settleLimit = Math.max(60_000, count * 20);
  try {
    const t0 = nowMs();
    for (let i = 0; i < s.candidates; i++) {
      procs.push(ManyProcess.start({ backend: target.url(), prefix, count, candidateId: `bench-many-${i}`, leaseMs: s.leaseMs }));
    }
    await Promise.all(procs.map((p) => p.ready(settleLimit)));
    // Every election led by exactly one process.
    await until(
      () => procs.reduce((a, p) => a + p.leading.size, 0) === count && new Set(procs.flatMap((p) => [...p.leading])).size === count,
      settleLimit,
      `every one of ${count} elections led once`,
      50,
    );
    result.settleMs = round(nowMs() - t0, 0);
    s.log(`    ${count} elections × ${s.candidates} processes settled in ${result.settleMs} ms (leading: ${procs.map((p) => p.leading.size).join('/')})`);
    await sleep(3000);
    const before = await Promise.all(procs.map((p) => p.freshStats()));
    const leadingAtStart = procs.map((p) => p.leading.size);
    await sleep(windowMs);
    const after = await Promise.all(procs.map((p) => p.freshStats()));
    // After the CPU window: a full collection costs CPU, and must not count in it.
    const memory = await Promise.all(procs.map((p) => p.memory().catch(() => null)));
    for (let i = 0; i < procs.length; i++) {
      const a = before[i]!;
      const b = after[i]!;
      const revoked: Record<string, number> = {};
      for (const [reason, n] of Object.entries(b.revoked)) {
        const d = n - (a.revoked[reason] ?? 0);
        if (d) revoked[reason] = d;
      }
      result.perProcess.push({
        candidateId: procs[i]!.config.candidateId,
        leading: leadingAtStart[i]!,
        cpuPercent: round(((b.cpuUs - a.cpuUs) / 1000 / (b.atMs - a.atMs)) * 100, 1),
        rssMiB: round(b.rssBytes / 2 ** 20, 1),
        heapMiB: round(b.heapBytes / 2 ** 20, 1),
        ...perElection(memory[i] ?? null, procs[i]!.readyReport?.baseline ?? null, count),
        revokedInWindow: revoked,
        startMs: procs[i]!.readyReport ? round(procs[i]!.readyReport!.startMs, 0) : null,
      });
      result.leaseExpiredInWindow += revoked['lease-expired'] ?? 0;
      result.leaseExpiredTotal += b.revoked['lease-expired'] ?? 0;
    }
    s.log(`    window ${windowMs} ms: ${JSON.stringify(result.perProcess)}`);

    // Take-over at scale: SIGKILL the process leading most elections.
    const victim = procs.reduce((a, p) => (p.leading.size > a.leading.size ? p : a));
    const led = [...victim.leading];
    const survivors = procs.filter((p) => p !== victim);
    const killAt = nowMs();
    survivors.forEach((p) => (p.markMs = killAt));
    victim.kill();
    const waitMs = s.leaseMs + Math.max(15_000, count * 5);
    await until(
      () => led.every((i) => survivors.some((p) => p.electedAfterMark.has(i))),
      waitMs,
      'take-over of every election of the killed process',
      50,
    ).catch((err: Error) => failures.push(err.message));
    const latencies: number[] = [];
    for (const i of led) {
      const times = survivors.map((p) => p.electedAfterMark.get(i)).filter((t): t is number => t !== undefined);
      if (times.length) latencies.push(Math.min(...times) - killAt);
    }
    result.takeover = { killedLeading: led.length, takenOver: latencies.length, latencyMs: summarize(latencies) };
    s.log(`    take-over after SIGKILL of the process leading ${led.length}: ${JSON.stringify(result.takeover.latencyMs)}`);
  } catch (err) {
    failures.push((err as Error).message);
    s.log(`    FAILED ${(err as Error).message}`);
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => p.kill())));
  }
  return result;
}
