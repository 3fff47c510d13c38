import type { Prng } from '../faults/prng';
import { holdFor, type FaultKind } from './fault-catalogue';
import type { FaultEnvironment } from './fault-environment';

export interface PlannedFault {
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

/** Every random choice of an episode is drawn here, up front, so a seed fixes the schedule. */
export function planEpisode(rng: Prng, weights: Record<FaultKind, number>, slots: number, env: FaultEnvironment, leaseMs: number): PlannedFault[] {
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
      available.failover = 0;
    }
    const kind = rng.weighted(available);
    const offsetMs = i === 0 ? 0 : rng.int(0, Math.round(leaseMs / 2));
    const holdMs = holdFor(kind, rng, leaseMs, env);
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
    } else if (kind === 'server-restart' || kind === 'server-pause' || kind === 'isolate' || kind === 'blip' || kind === 'failover') {
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
