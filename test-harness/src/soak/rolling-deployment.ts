import type { CandidateProcess } from '../candidate/candidate-process';
import { monotonicMs } from '../history/history-recorder';
import { delay } from '../wait-for';
import type { CandidateSlot, FaultCluster } from './fault-cluster';

/** One process replaced by a process of the next kind, in its slot. */
export interface RollRecord {
  /** The process stopped and the one started (`<id>@<pid>`). */
  stopped: string;
  started: string;
  from: string;
  to: string;
  /** When the stop began (monotonic ms). */
  atMs: number;
  /** Whether the stopped process led when its stop began. */
  onLeader: boolean;
}

export interface RolloutReport {
  kinds: readonly string[];
  /** Processes replaced by the next kind. */
  steps: number;
  /** Times the whole fleet went from the first kind to the last and back to the first. */
  cycles: number;
  /** Steps put off: no slot free to move, or the kind between had no leader in time (see `step`). */
  deferred: number;
  rolls: RollRecord[];
}

/** How long a graceful stop may take before the process is SIGKILLed (a release may hang on a cut-off side). */
const STOP_TIMEOUT_MS = 8000;

/** The node kind a candidate process runs: the suffix `FaultCluster.spawn` gives its id. */
export function nodeKindOf(proc: CandidateProcess, kinds: readonly string[]): string | null {
  return kinds.find((k) => proc.id.endsWith(`-${k}`)) ?? null;
}

/**
 * A rolling deployment over a fault cluster's slots: one process at a time is stopped gracefully
 * and replaced, in its slot (same proxies), by a process of the next kind. When every slot runs
 * the target kind, the target moves on to the last kind, then back to the first (a rollback),
 * then forward again, and so on. A killed process comes back as its slot's kind, so faults never
 * change which kinds run.
 */
export class RollingDeployment {
  /** Index in `kinds` of the kind the fleet is moving to. */
  private target = 1;
  private direction: 1 | -1 = 1;
  private readonly rolls: RollRecord[] = [];
  private cycles = 0;
  private deferred = 0;

  /** `waitMs`: how long the first step into a kind waits for a leader of the kind between. */
  constructor(
    private readonly cluster: FaultCluster,
    readonly kinds: readonly string[],
    private readonly waitMs: number,
  ) {
    if (kinds.length < 2) throw new Error('harness: a rolling deployment needs two node kinds');
    if (cluster.slots.some((s) => s.nodeKind !== kinds[0])) throw new Error(`harness: every slot must start as ${kinds[0]}`);
  }

  get cyclesDone(): number {
    return this.cycles;
  }

  report(): RolloutReport {
    return { kinds: this.kinds, steps: this.rolls.length, cycles: this.cycles, deferred: this.deferred, rolls: [...this.rolls] };
  }

  /**
   * Moves one slot (`draw`, in [0, 1), picks it among those free: not killed, frozen or moving)
   * to the target kind: a graceful stop (it releases its lease), then the new process. Resolves with what
   * it did, or null when it put the step off.
   *
   * The first process of a kind starts only while a process of the kind between leads: kinds two
   * steps apart share no lease (old ZooKeeper-only nodes beside `to-only` ones), so the one going
   * away is gone by then (every slot already runs the kind between), and a term of the kind
   * between that began after the last of them ended is what carries the token sequence across —
   * the README's rule before step 2, and its mirror before rolling back to old nodes (a dual term
   * raises ZooKeeper's floor above every MySQL token). Without such a leader within `waitMs` (a
   * side blipped, say), the step is put off.
   */
  async step(draw: number): Promise<RollRecord | null> {
    const kind = this.kinds[this.target]!;
    const free = () => this.cluster.slots.filter((s) => s.nodeKind !== kind && !s.restarting && !s.frozen);
    const first = this.cluster.slots.every((s) => s.nodeKind !== kind);
    if (free().length === 0 || (first && !(await this.betweenLeads()))) {
      this.deferred++;
      return null;
    }
    const choices = free();
    if (choices.length === 0) {
      this.deferred++;
      return null;
    }
    const slot = choices[Math.min(choices.length - 1, Math.floor(draw * choices.length))]!;
    this.assertNoConflict(kind, slot);
    const record = await this.replace(slot, kind);
    this.advanceIfDone();
    return record;
  }

  private async replace(slot: CandidateSlot, kind: string): Promise<RollRecord> {
    const proc = slot.proc;
    const onLeader = this.cluster.leadingNow(slot);
    const from = slot.nodeKind!;
    const atMs = monotonicMs();
    // Other faults leave a slot alone while it is being replaced.
    slot.restarting = true;
    await proc.stop(STOP_TIMEOUT_MS);
    slot.nodeKind = kind;
    const started = await this.cluster.spawn(slot);
    const record = { stopped: proc.key, started: started.key, from, to: kind, atMs, onLeader };
    this.rolls.push(record);
    return record;
  }

  /** Once every slot runs the target kind, the next target (turning at either end). */
  private advanceIfDone(): void {
    if (this.cluster.slots.some((s) => s.nodeKind !== this.kinds[this.target])) return;
    if (this.target === this.kinds.length - 1) this.direction = -1;
    else if (this.target === 0) {
      this.direction = 1;
      this.cycles++;
    }
    this.target += this.direction;
  }

  /** Whether a process of the kind between the target and the kind two steps back leads now (waits up to `waitMs`). */
  private async betweenLeads(): Promise<boolean> {
    const far = this.target - 2 * this.direction;
    if (far < 0 || far >= this.kinds.length) return true;
    const between = this.kinds[this.target - this.direction]!;
    const deadline = monotonicMs() + this.waitMs;
    for (;;) {
      const leader = this.cluster.leader();
      if (leader && nodeKindOf(leader.proc, this.kinds) === between) return true;
      if (monotonicMs() > deadline) return false;
      await delay(20);
    }
  }

  /** A harness check: no live process two kinds away from the one about to start. */
  private assertNoConflict(kind: string, moving: CandidateSlot): void {
    const at = this.kinds.indexOf(kind);
    for (const slot of this.cluster.slots) {
      if (slot === moving) continue;
      // A killed process comes back as its slot's kind.
      const running = slot.proc.hasExited ? slot.nodeKind : nodeKindOf(slot.proc, this.kinds);
      if (running !== undefined && running !== null && Math.abs(this.kinds.indexOf(running) - at) >= 2) {
        throw new Error(`harness: would start ${kind} beside ${slot.proc.key} (${running}), which shares no lease with it`);
      }
    }
  }
}
