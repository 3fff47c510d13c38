import { randomBytes } from 'node:crypto';
import { CandidateProcess } from '../candidate/candidate-process';
import type { CandidateReport } from '../candidate/candidate-protocol';
import { startFaultProxy, type FaultProxy } from '../faults/fault-proxy';
import type { GuardConfig, GuardState } from '../guard/guard-config';
import { dropGuard, prepareGuard, readGuard } from '../guard/guarded-resource';
import { monotonicMs } from '../history/history-recorder';
import type { GuardWrite, TermHistoryEvent } from '../history/split-brain-checker';
import type { BackendKit } from '../kits/backend-kit';
import { resolveBackendKit } from '../kits/load-backend-kit';
import { delay } from '../wait-for';
import { startFaultEnvironment, type FaultEnvironment, type FaultTopology } from './fault-environment';

/** Where the guarded resource lives: the shared servers, which fault runs never disturb. */
export const GUARD_REDIS_URL = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const GUARD_MYSQL_URL = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';

export interface FaultClusterOptions {
  /** The backend's kit, or its name (`redis`, or a module name: see `loadBackendKit`). */
  backend: BackendKit | string;
  /** The deployment staged (see `FaultTopology`). Default `single`. */
  topology?: FaultTopology;
  /** Candidate processes, each behind its own proxy to each private server. Default 3. */
  candidates?: number;
  /** Default 1500. */
  leaseMs?: number;
  /** Where the guarded resource lives. Default the kit's `guard`, else `redis`. */
  guard?: 'redis' | 'mysql' | 'none';
  /** Work report interval of each candidate, ms. Default 20. */
  workIntervalMs?: number;
  /** Guarded write interval, ms. Default 25. */
  writeIntervalMs?: number;
  /** A label in the election's name. */
  label?: string;
}

/** One candidate position: its proxies stay, its process is replaced after a kill. */
export interface CandidateSlot {
  readonly index: number;
  /** Its whole network: every call acts on all of `links` at once. */
  readonly proxy: FaultProxy;
  /** One proxy per server (`links[i]` leads to `env.servers[i]`): cut it off from one server only. */
  readonly links: readonly FaultProxy[];
  proc: CandidateProcess;
  /**
   * How many processes this slot has had (ids are `c<index>-<generation>`; in the `duplicate-id`
   * topology, slots 0 and 1 are always `dup`).
   */
  generation: number;
  frozen: boolean;
  /** Killed and not yet replaced: other faults leave it alone (a second spawn would orphan a process). */
  restarting: boolean;
  /**
   * What its next process runs, where the environment has several node kinds (a rolling
   * deployment changes it between processes; a killed process comes back as the same kind).
   */
  nodeKind?: string;
}

/** The candidate id the `duplicate-id` topology gives the processes of slots 0 and 1. */
export const DUPLICATE_CANDIDATE_ID = 'dup';

/** A FaultProxy acting on several at once (a candidate's links to every server). */
function allLinks(links: readonly FaultProxy[]): FaultProxy {
  return {
    // Filled after this object is made: read the first link when asked.
    get port() {
      return links[0]!.port;
    },
    get address() {
      return links[0]!.address;
    },
    delay: (ms) => links.forEach((l) => l.delay(ms)),
    blackhole: () => links.forEach((l) => l.blackhole()),
    cut: () => links.forEach((l) => l.cut()),
    resume: () => links.forEach((l) => l.resume()),
    heal: () => links.forEach((l) => l.heal()),
    openConnections: () => links.reduce((n, l) => n + l.openConnections(), 0),
    close: async () => {
      await Promise.all(links.map((l) => l.close()));
    },
  };
}

/**
 * Private servers (one, or three for a quorum or an ensemble), N candidate processes each behind
 * its own FaultProxy to each server, and a guarded resource: the stage of every fault test and of
 * the soak. `close()` stops everything it started, even
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
    /** The backend's kit: its provider modules are what each candidate loads. */
    readonly kit: BackendKit,
    private readonly options: Required<Omit<FaultClusterOptions, 'label' | 'guard' | 'backend'>>,
    guard: GuardConfig | null,
    election: string,
  ) {
    this.leaseMs = options.leaseMs;
    this.guard = guard;
    this.election = election;
  }

  static async start(options: FaultClusterOptions): Promise<FaultCluster> {
    const kit = await resolveBackendKit(options.backend);
    const resolved = {
      topology: options.topology ?? 'single',
      candidates: options.candidates ?? 3,
      leaseMs: options.leaseMs ?? 1500,
      workIntervalMs: options.workIntervalMs ?? 20,
      writeIntervalMs: options.writeIntervalMs ?? 25,
    };
    const election = `fault-${options.label ?? kit.kind}-${randomBytes(4).toString('hex')}`;
    const guardKind = options.guard ?? kit.guard ?? 'redis';
    const guard: GuardConfig | null =
      guardKind === 'none'
        ? null
        : guardKind === 'redis'
          ? { kind: 'redis', url: GUARD_REDIS_URL, key: `conclave-guard:${election}`, intervalMs: resolved.writeIntervalMs }
          : { kind: 'mysql', url: GUARD_MYSQL_URL, table: 'conclave_guard', name: election, intervalMs: resolved.writeIntervalMs };
    const env = await startFaultEnvironment(kit, resolved.leaseMs, resolved.topology);
    const cluster = new FaultCluster(env, kit, resolved, guard, election);
    try {
      if (guard) await prepareGuard(guard);
      for (let i = 0; i < resolved.candidates; i++) {
        const links: FaultProxy[] = [];
        const slot: CandidateSlot = { index: i, proxy: allLinks(links), links, proc: null as unknown as CandidateProcess, generation: 0, frozen: false, restarting: false };
        if (env.nodeKinds) slot.nodeKind = env.nodeKinds[0]!;
        cluster.slots.push(slot);
        for (const server of env.servers) links.push(await startFaultProxy({ targetPort: server.port }));
        slot.proc = await cluster.spawn(slot);
      }
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /** The topology staged. */
  get topology(): FaultTopology {
    return this.env.topology;
  }

  /**
   * Starts a new process in `slot`, and resolves once it is ready. A new candidate id (ending in
   * the slot's node kind, if it has one), except for the duplicated slots of the `duplicate-id`
   * topology: a restarted pod keeps its name.
   */
  async spawn(slot: CandidateSlot): Promise<CandidateProcess> {
    // A process the slot forgets would keep campaigning unobserved by the checks of the run.
    if (slot.proc && !slot.proc.hasExited) {
      throw new Error(`harness: slot ${slot.index} would orphan its live process ${slot.proc.key}`);
    }
    const generation = slot.generation++;
    const kind = slot.nodeKind === undefined ? '' : `-${slot.nodeKind}`;
    const id = this.topology === 'duplicate-id' && slot.index < 2 ? DUPLICATE_CANDIDATE_ID : `c${slot.index}-${generation}${kind}`;
    const proc = await CandidateProcess.start(
      {
        backend: this.env.urlFor(slot.links.map((l) => l.port), slot.nodeKind),
        providers: [...this.kit.providerModules],
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
    slot.restarting = false;
    return proc;
  }

  /**
   * Whether `proc` leads right now as far as the harness can tell: its last report says so, it
   * is alive and not frozen, and its last reported lease has not run out.
   */
  leadingNow(slot: CandidateSlot): boolean {
    const proc = slot.proc;
    if (slot.frozen || slot.restarting || proc.hasExited || !proc.leading) return false;
    const until = lastLeaseUntil(proc.reports);
    return until !== null && until > monotonicMs();
  }

  /** The slot whose process leads now, if any. */
  leader(): CandidateSlot | null {
    return this.slots.find((s) => this.leadingNow(s)) ?? null;
  }

  /** Why no slot counts as leading now, one clause per slot (for the log of a late recovery). */
  describeSlots(): string {
    const now = monotonicMs();
    return this.slots
      .map((s) => {
        const p = s.proc;
        const until = lastLeaseUntil(p.reports);
        const last = p.reports.slice(-3).map((r) => r.type).join(',');
        const lease = until === null ? 'no lease' : `lease ends ${Math.round(until - now)} ms from now`;
        const seen = [...p.reports].reverse().find((r) => r.type === 'leader');
        const logged = [...p.reports].reverse().find((r) => r.type === 'log');
        const terms = p.reports.filter((r) => r.type === 'elected' && r.atMs > now - 20_000).length;
        return (
          `${p.key}: ${s.frozen ? 'frozen' : p.hasExited ? 'exited' : p.leading ? 'leading' : 'follower'}, ${lease}, ` +
          `${terms} terms in 20 s, sees leader ${seen?.type === 'leader' ? JSON.stringify(seen.leaderId) : '?'}, last reports ${last}` +
          (logged?.type === 'log' ? `, last log ${Math.round(now - logged.atMs)} ms ago: ${logged.message}` : '')
        );
      })
      .join('; ');
  }

  /**
   * Waits until some candidate leads; resolves with the wait (ms), or null after `timeoutMs`. With
   * `sinceMs`, a leader counts once it has worked at or after that instant, as the recovery check
   * counts it: a leader that has just stepped down still reports leading until its revocation
   * arrives, and a run that took it for the next leader could end before there was one.
   */
  async waitForLeader(timeoutMs: number, sinceMs?: number): Promise<number | null> {
    const started = monotonicMs();
    for (;;) {
      if (this.slots.some((s) => this.leadingNow(s) && (sinceMs === undefined || workedSince(s, sinceMs)))) return monotonicMs() - started;
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
        for (const server of this.env.servers) server.resume?.();
        this.env.healServers?.();
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

/** Whether the slot's process reported work stamped at or after `sinceMs`. */
function workedSince(slot: CandidateSlot, sinceMs: number): boolean {
  const reports = slot.proc.reports;
  for (let i = reports.length - 1; i >= 0; i--) {
    const r = reports[i]!;
    if (r.type === 'work' && r.atMs >= sinceMs) return true;
    if (r.atMs < sinceMs) return false;
  }
  return false;
}
