/**
 * The parent's handle on one peer process: the part of test-harness `CandidateProcess` the
 * scenarios use, for a script of the bench's own (the harness's handle always forks conclave's
 * candidate). Same config, same reports, same faults.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { CandidateConfig, CandidateReport } from '../../../test-harness/dist/candidate/candidate-protocol';
import type { TermHistoryEvent } from '../../../test-harness/dist/history/split-brain-checker';

export type PeerScript = 'mysql-row' | 'zk-recipe' | 'redlock-using' | 'etcd-election';

export class PeerProcess {
  readonly reports: CandidateReport[] = [];
  killedAtMs: number | null = null;
  private readonly listeners = new Set<(report: CandidateReport) => void>();
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly config: CandidateConfig,
    readonly child: ChildProcess,
  ) {
    child.on('message', (message: CandidateReport) => {
      this.reports.push(message);
      for (const listener of this.listeners) listener(message);
    });
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(script: PeerScript, config: CandidateConfig, timeoutMs = 30_000): Promise<PeerProcess> {
    const child = fork(join(__dirname, `${script}.js`), [], {
      env: { ...process.env, CONCLAVE_CANDIDATE: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const p = new PeerProcess(config, child);
    const first = await new Promise<CandidateReport | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      const off = p.onReport((r) => {
        if (r.type !== 'ready' && r.type !== 'error') return;
        clearTimeout(timer);
        off();
        resolve(r);
      });
      child.once('exit', () => resolve(null));
    });
    if (!first || first.type === 'error') {
      p.kill('SIGKILL');
      throw new Error(`peer ${script} ${config.candidateId} failed to start: ${first?.type === 'error' ? first.message : 'no ready report'}`);
    }
    return p;
  }

  get id(): string {
    return this.config.candidateId;
  }

  get key(): string {
    return `${this.config.candidateId}@${this.child.pid ?? '?'}`;
  }

  onReport(listener: (report: CandidateReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get leading(): boolean {
    for (let i = this.reports.length - 1; i >= 0; i--) {
      const r = this.reports[i]!;
      if (r.type === 'elected') return true;
      if (r.type === 'revoked' || r.type === 'stopped') return false;
    }
    return false;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (signal === 'SIGKILL') this.killedAtMs ??= Number(process.hrtime.bigint()) / 1e6;
    this.child.kill(signal);
  }

  freeze(): void {
    this.kill('SIGSTOP');
  }

  thaw(): void {
    this.kill('SIGCONT');
  }

  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  /** Terms and work for the split-brain checker (as the harness builds them, without lease ends). */
  history(): TermHistoryEvent[] {
    const events: TermHistoryEvent[] = [];
    for (const r of this.reports) {
      if (r.type === 'elected' || r.type === 'work' || r.type === 'revoked') {
        events.push({ atMs: r.atMs, candidateId: this.id, process: this.key, kind: r.type, token: r.token });
      }
    }
    const last = [...events].reverse().find((e) => e.kind !== 'work');
    if (this.killedAtMs !== null && last?.kind === 'elected') {
      events.push({ atMs: this.killedAtMs, candidateId: this.id, process: this.key, kind: 'revoked', token: last.token });
    }
    return events;
  }
}
