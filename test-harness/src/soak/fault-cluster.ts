import { randomBytes } from 'node:crypto';
import { CandidateProcess } from '../candidate/candidate-process';
import type { CandidateReport } from '../candidate/candidate-protocol';
import { startFaultProxy, type FaultProxy } from '../faults/fault-proxy';
import type { GuardConfig, GuardState } from '../guard/guard-config';
import { dropGuard, prepareGuard, readGuard } from '../guard/guarded-resource';
import { monotonicMs } from '../history/history-recorder';
import type { GuardWrite, TermHistoryEvent } from '../history/split-brain-checker';
import { delay } from '../wait-for';
import { startFaultEnvironment, type FaultBackendKind, type FaultEnvironment } from './fault-environment';

/** Where the guarded resource lives: the shared servers, which fault runs never disturb. */
export const GUARD_REDIS_URL = process.env.CONCLAVE_GUARD_REDIS ?? 'redis://127.0.0.1:6379';
export const GUARD_MYSQL_URL = process.env.CONCLAVE_GUARD_MYSQL ?? 'mysql://root@127.0.0.1:3306/test';

export interface FaultClusterOptions {
  backend: FaultBackendKind;
  /** Candidate processes, each behind its own proxy to the one private server. Default 3. */
  candidates?: number;
  /** Default 1500. */
  leaseMs?: number;
  /** Where the guarded resource lives. Default `mysql` on the MySQL backend, else `redis`. */
  guard?: 'redis' | 'mysql' | 'none';
  /** Work report interval of each candidate, ms. Default 20. */
  workIntervalMs?: number;
  /** Guarded write interval, ms. Default 25. */
  writeIntervalMs?: number;
  /** A label in the election's name. */
  label?: string;
}

/** One candidate position: its proxy stays, its process is replaced after a kill. */
export interface CandidateSlot {
  readonly index: number;
  readonly proxy: FaultProxy;
  proc: CandidateProcess;
  /** How many processes this slot has had (ids are `c<index>-<generation>`). */
  generation: number;
  frozen: boolean;
}

/**
 * A private server, N candidate processes each behind its own FaultProxy, and a guarded resource:
 * the stage of every fault test and of the soak. `close()` stops everything it started, even
 * after a failure; call it in `finally`/`afterAll`.
 */
export class FaultCluster {
  readonly election: string;
  readonly leaseMs: number;
  readonly slots: CandidateSlot[] = [];
  /** Every process ever started (killed ones included), for the history. */
  readonly processes: CandidateProcess[] = [];
  readonly guard: GuardConfig | null;
  private closed: Promise<void> | null = null;

  private constructor(
    readonly env: FaultEnvironment,
    private readonly options: Required<Omit<FaultClusterOptions, 'label' | 'guard'>>,
    guard: GuardConfig | null,
    election: string,
  ) {
    this.leaseMs = options.leaseMs;
    this.guard = guard;
    this.election = election;
  }

  static async start(options: FaultClusterOptions): Promise<FaultCluster> {
    const resolved = {
      backend: options.backend,
      candidates: options.candidates ?? 3,
      leaseMs: options.leaseMs ?? 1500,
      workIntervalMs: options.workIntervalMs ?? 20,
      writeIntervalMs: options.writeIntervalMs ?? 25,
    };
    const election = `fault-${options.label ?? options.backend}-${randomBytes(4).toString('hex')}`;
    const guardKind = options.guard ?? (options.backend === 'mysql' ? 'mysql' : 'redis');
    const guard: GuardConfig | null =
      guardKind === 'none'
        ? null
        : guardKind === 'redis'
          ? { kind: 'redis', url: GUARD_REDIS_URL, key: `conclave-guard:${election}`, intervalMs: resolved.writeIntervalMs }
          : { kind: 'mysql', url: GUARD_MYSQL_URL, table: 'conclave_guard', name: election, intervalMs: resolved.writeIntervalMs };
    const env = await startFaultEnvironment(options.backend, resolved.leaseMs);
    const cluster = new FaultCluster(env, resolved, guard, election);
    try {
      if (guard) await prepareGuard(guard);
      for (let i = 0; i < resolved.candidates; i++) {
        const proxy = await startFaultProxy({ targetPort: env.serverPort });
        const slot: CandidateSlot = { index: i, proxy, proc: null as unknown as CandidateProcess, generation: 0, frozen: false };
        cluster.slots.push(slot);
        slot.proc = await cluster.spawn(slot);
      }
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /** Starts a new process in `slot` (new candidate id), and resolves once it is ready. */
  async spawn(slot: CandidateSlot): Promise<CandidateProcess> {
    const id = `c${slot.index}-${slot.generation++}`;
    const proc = await CandidateProcess.start(
      {
        backend: this.env.urlFor(slot.proxy.port),
        election: this.election,
        candidateId: id,
        leaseMs: this.leaseMs,
        workIntervalMs: this.options.workIntervalMs,
        ...(this.guard ? { guard: this.guard } : {}),
      },
      60_000,
    );
    this.processes.push(proc);
    slot.proc = proc;
    slot.frozen = false;
    return proc;
  }

  /**
   * Whether `proc` leads right now as far as the harness can tell: its last report says so, it
   * is alive and not frozen, and its last reported lease has not run out.
   */
  leadingNow(slot: CandidateSlot): boolean {
    const proc = slot.proc;
    if (slot.frozen || proc.hasExited || !proc.leading) return false;
    const until = lastLeaseUntil(proc.reports);
    return until !== null && until > monotonicMs();
  }

  /** The slot whose process leads now, if any. */
  leader(): CandidateSlot | null {
    return this.slots.find((s) => this.leadingNow(s)) ?? null;
  }

  /** Waits until some candidate leads; resolves with the wait (ms), or null after `timeoutMs`. */
  async waitForLeader(timeoutMs: number): Promise<number | null> {
    const started = monotonicMs();
    for (;;) {
      if (this.leader()) return monotonicMs() - started;
      if (monotonicMs() - started > timeoutMs) return null;
      await delay(20);
    }
  }

  history(): TermHistoryEvent[] {
    return this.processes.flatMap((p) => p.history());
  }

  writes(): GuardWrite[] {
    return this.processes.flatMap((p) => p.writes());
  }

  async guardState(): Promise<GuardState | null> {
    return this.guard ? readGuard(this.guard) : null;
  }

  /** Thaws and stops every candidate (graceful, SIGKILL after `timeoutMs`); proxies and server stay. */
  async stopCandidates(timeoutMs = 8000): Promise<void> {
    for (const slot of this.slots) {
      if (slot.frozen) slot.proc.thaw();
      slot.frozen = false;
      slot.proxy.heal();
    }
    await Promise.all(this.processes.map((p) => (p.hasExited ? undefined : p.stop(timeoutMs))));
  }

  /** Stops everything this cluster started. Idempotent; never rejects. */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = (async () => {
        const safe = async (what: () => Promise<unknown>) => {
          try {
            await what();
          } catch {
            // best effort: the rest must still be cleaned up
          }
        };
        this.env.resumeServer?.();
        await safe(() => this.stopCandidates(5000));
        for (const p of this.processes) p.kill('SIGKILL');
        await Promise.all(this.slots.map((s) => safe(() => s.proxy.close())));
        await safe(() => this.env.close());
        if (this.guard) await safe(() => dropGuard(this.guard!));
      })();
    }
    return this.closed;
  }
}

/** The `untilMs` of the last lease reported for the term the process last reported elected in. */
export function lastLeaseUntil(reports: readonly CandidateReport[]): number | null {
  let token: number | null = null;
  for (let i = reports.length - 1; i >= 0; i--) {
    const r = reports[i]!;
    if (r.type === 'elected') {
      token = r.token;
      break;
    }
  }
  if (token === null) return null;
  for (let i = reports.length - 1; i >= 0; i--) {
    const r = reports[i]!;
    if (r.type === 'lease' && r.token === token) return r.untilMs;
  }
  return null;
}
