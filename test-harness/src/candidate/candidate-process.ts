import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { GuardWrite, TermHistoryEvent } from '../history/split-brain-checker';
import type { CandidateCommand, CandidateConfig, CandidateReport } from './candidate-protocol';

/** The compiled candidate script (tests and benchmarks run after `tsc --build`). */
export const CANDIDATE_SCRIPT = join(__dirname, '..', '..', 'dist', 'candidate', 'candidate-main.js');

/** Another child speaking the candidate protocol (the bench's peers, say) in place of conclave's candidate. */
export interface CandidateProcessOptions {
  /** The script to fork; it reads CONCLAVE_CANDIDATE and reports over IPC. Default `CANDIDATE_SCRIPT`. */
  script?: string;
  /** What the process is, in errors. Default `candidate`. */
  name?: string;
  /**
   * Whether `history()` ends a term at the last lease the process reported (default true). Only
   * where `isLeader()` itself stops at the lease end: a child whose lease reports say what its
   * server holds, while its `isLeader()` may answer true after that, would have overlaps hidden.
   */
  leaseEndsTerms?: boolean;
}

/**
 * The parent's handle on one candidate process: its reports, as history events for the
 * split-brain checker, and the faults a test can inflict (SIGKILL, SIGSTOP/SIGCONT, SIGTERM).
 */
export class CandidateProcess {
  readonly reports: CandidateReport[] = [];
  /** When the parent SIGKILLed it (monotonic ms), if it did. */
  killedAtMs: number | null = null;
  private readonly listeners = new Set<(report: CandidateReport) => void>();
  private exited: Promise<number | null>;

  private constructor(
    readonly config: CandidateConfig,
    readonly child: ChildProcess,
    private readonly leaseEndsTerms: boolean,
  ) {
    child.on('message', (message: CandidateReport) => {
      this.reports.push(message);
      for (const listener of this.listeners) listener(message);
    });
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * Starts a candidate and resolves once it is ready (its first outcome known). A child that
   * reports an error, exits or stays silent for `timeoutMs` is killed, and the start fails.
   */
  static async start(config: CandidateConfig, timeoutMs = 30_000, options: CandidateProcessOptions = {}): Promise<CandidateProcess> {
    const child = fork(options.script ?? CANDIDATE_SCRIPT, [], {
      env: { ...process.env, CONCLAVE_CANDIDATE: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const candidate = new CandidateProcess(config, child, options.leaseEndsTerms ?? true);
    const first = await new Promise<CandidateReport | string>((resolve) => {
      const settle = (outcome: CandidateReport | string) => {
        clearTimeout(timer);
        off();
        child.off('close', onClose);
        resolve(outcome);
      };
      const timer = setTimeout(() => settle(`no ready report within ${timeoutMs} ms`), timeoutMs);
      const off = candidate.onReport((r) => {
        if (r.type === 'ready' || r.type === 'error') settle(r);
      });
      // 'close' waits for the IPC channel, so an error reported on the way out is seen first.
      const onClose = () => settle('exited before it was ready');
      child.once('close', onClose);
    });
    if (typeof first === 'string' || first.type === 'error') {
      candidate.kill('SIGKILL');
      const why = typeof first === 'string' ? first : first.message;
      throw new Error(`${options.name ?? 'candidate'} ${config.candidateId} failed to start: ${why}`);
    }
    return candidate;
  }

  /** The candidate id it was started with (two processes may share one). */
  get id(): string {
    return this.config.candidateId;
  }

  /**
   * This process's own name in histories and reports, unique even when candidate ids repeat:
   * `<candidate id>@<pid>`. The split-brain checker tells leaders apart by it.
   */
  get key(): string {
    return `${this.config.candidateId}@${this.child.pid ?? '?'}`;
  }

  /** The id its Elector campaigns under (candidate id and nonce), once known from its `ready` report; null before or when the Elector does not expose one. */
  get instanceId(): string | null {
    const ready = this.reports.find((r) => r.type === 'ready');
    return ready && ready.type === 'ready' ? (ready.instanceId ?? null) : null;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the first report from now on that matches, or rejects after `timeoutMs`. */
  next(match: (report: CandidateReport) => boolean, timeoutMs = 30_000): Promise<CandidateReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`candidate ${this.id}: no matching report within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (report: CandidateReport) => {
        if (!match(report)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(report);
      };
      this.listeners.add(listener);
    });
  }

  /** Subscribes to every report; returns the function that unsubscribes. */
  onReport(listener: (report: CandidateReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True while the candidate's last election/revocation report says it leads. */
  get leading(): boolean {
    for (let i = this.reports.length - 1; i >= 0; i--) {
      const r = this.reports[i]!;
      if (r.type === 'elected') return true;
      if (r.type === 'revoked' || r.type === 'stopped') return false;
    }
    return false;
  }

  send(command: CandidateCommand): void {
    if (this.child.connected) this.child.send(command);
  }

  /** Graceful: the candidate stops its Elector (releasing), closes its backend and exits. */
  async stop(timeoutMs = 15_000): Promise<void> {
    this.send({ type: 'stop' });
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    // Stamped once the signal is sent: a stamp taken before could precede a unit of work the
    // child did while this process was descheduled between the two (see `history()`).
    if (signal === 'SIGKILL') this.killedAtMs ??= Number(process.hrtime.bigint()) / 1e6;
  }

  /** SIGSTOP: a frozen process, as in a long GC pause. */
  freeze(): void {
    this.kill('SIGSTOP');
  }

  /** SIGCONT after `freeze()`. */
  thaw(): void {
    this.kill('SIGCONT');
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  /**
   * This candidate's reports as history events for the split-brain checker, keyed by `key`
   * (the process), so a duplicate of its candidate id is a different leader. A `revoked` event
   * carries `leaseEndMs` when the candidate reported its leases and `leaseEndsTerms` holds: the
   * latest instant its `isLeader()` could be true in that term (a frozen process reports its
   * revocation only when it wakes, long after its lease ran out).
   */
  history(): TermHistoryEvent[] {
    const events: TermHistoryEvent[] = [];
    const leaseEnd = new Map<number, number>();
    for (const r of this.reports) {
      if (r.type === 'lease' && this.leaseEndsTerms) leaseEnd.set(r.token, Math.max(leaseEnd.get(r.token) ?? -Infinity, r.untilMs));
      if (r.type === 'elected' || r.type === 'work') {
        events.push({ atMs: r.atMs, candidateId: this.id, process: this.key, kind: r.type, token: r.token });
      } else if (r.type === 'revoked') {
        const end = leaseEnd.get(r.token);
        events.push({
          atMs: r.atMs,
          candidateId: this.id,
          process: this.key,
          kind: 'revoked',
          token: r.token,
          ...(end === undefined ? {} : { leaseEndMs: end }),
        });
      }
    }
    const last = [...events].reverse().find((e) => e.kind !== 'work');
    if (this.killedAtMs !== null && last?.kind === 'elected') {
      const end = leaseEnd.get(last.token);
      // A killed process does nothing after the kill, but what it reported it did: the term ends
      // at the kill or at its last report, whichever is later (the kill signal takes a moment to
      // land; the lease end, when known, still bounds the term).
      const lastReportAt = this.reports.reduce((m, r) => Math.max(m, r.atMs), -Infinity);
      events.push({
        atMs: Math.max(this.killedAtMs, lastReportAt),
        candidateId: this.id,
        process: this.key,
        kind: 'revoked',
        token: last.token,
        ...(end === undefined ? {} : { leaseEndMs: end }),
      });
    }
    return events;
  }

  /** This candidate's writes to its guarded resource (empty without a `guard` config). */
  writes(): GuardWrite[] {
    const writes: GuardWrite[] = [];
    for (const r of this.reports) {
      if (r.type === 'write') {
        writes.push({
          candidateId: this.id,
          process: this.key,
          atMs: r.atMs,
          doneAtMs: r.doneAtMs,
          token: r.token,
          accepted: r.accepted,
          seq: r.seq,
          ...(r.error === undefined ? {} : { error: r.error }),
        });
      }
    }
    return writes;
  }

  /** Whether the process has exited. */
  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }
}
