import { monotonicMs } from '../history/history-recorder';
import type { Prng } from '../faults/prng';
import { delay } from '../wait-for';
import { failoverKindFor, latencyFor, type FaultKind } from './fault-catalogue';
import type { CandidateSlot, FaultCluster } from './fault-cluster';
import type { PlannedFault } from './fault-plan';

export interface FaultRecord {
  kind: FaultKind;
  /** The candidate process (`<id>@<pid>`), `server <i>`, or `<process> → server <i>` for a link. */
  target: string;
  atMs: number;
  /** How long the fault lasted, ms. */
  holdMs: number;
  /** Whether the target was the leader when the fault began. */
  onLeader: boolean;
}

export async function runFault(cluster: FaultCluster, f: PlannedFault, rng: Prng, record: FaultRecord[]): Promise<void> {
  const latency = f.kind === 'delay' ? latencyFor(rng, cluster.leaseMs) : 0;
  if (f.offsetMs > 0) await delay(f.offsetMs);
  let slot: CandidateSlot | null = null;
  let onLeader = false;
  if (f.target === 'leader') {
    slot = cluster.leader();
    onLeader = slot !== null;
    if (!slot) {
      if (f.kind === 'step-down') return;
      // Nobody leads at this instant: hit a candidate that is not already under a fault.
      slot = cluster.slots.find((s) => !s.frozen && !s.restarting) ?? cluster.slots[0]!;
    }
  } else if (typeof f.target === 'number') {
    slot = cluster.slots[f.target]!;
    onLeader = cluster.leadingNow(slot);
  }
  if (slot && (slot.frozen || slot.restarting)) return; // another fault of this episode froze or killed it
  const server = await resolveServer(cluster, f, slot);
  // A rolling step may have taken the slot meanwhile.
  if (slot && (slot.frozen || slot.restarting)) return;
  const atMs = monotonicMs();
  const label = cluster.env.servers[server]?.label;
  const serverName = label ? `server ${server} (${label})` : `server ${server}`;
  const target =
    f.kind === 'link' ? `${slot!.proc.key} → ${serverName}` : f.target === 'server' || f.kind === 'isolate' ? serverName : slot!.proc.key;
  const entry: FaultRecord = { kind: f.kind, target, atMs, holdMs: f.holdMs, onLeader };
  record.push(entry);
  const env = cluster.env;
  switch (f.kind) {
    case 'kill':
      slot!.restarting = true;
      slot!.proc.kill('SIGKILL');
      await slot!.proc.waitForExit();
      await delay(f.holdMs);
      await cluster.spawn(slot!);
      return;
    case 'freeze': {
      const proc = slot!.proc;
      slot!.frozen = true;
      proc.freeze();
      await delay(f.holdMs);
      proc.thaw();
      if (slot!.proc === proc) slot!.frozen = false;
      return;
    }
    case 'partition':
      slot!.proxy.blackhole();
      await delay(f.holdMs);
      slot!.proxy.resume();
      return;
    case 'cut':
      slot!.proxy.cut();
      await delay(f.holdMs);
      slot!.proxy.resume();
      return;
    case 'delay':
      slot!.proxy.delay(latency);
      await delay(f.holdMs);
      slot!.proxy.delay(0);
      return;
    case 'server-restart':
      await env.servers[server]!.kill();
      await delay(f.holdMs);
      await env.servers[server]!.restart();
      return;
    case 'server-pause': {
      const paused = env.servers[server]!.pause ? env.servers[server]! : env.servers.find((s) => s.pause)!;
      await paused.pause!();
      await delay(f.holdMs);
      paused.resume!();
      return;
    }
    case 'link': {
      const link = slot!.links[server]!;
      if (f.blackhole) link.blackhole();
      else link.cut();
      await delay(f.holdMs);
      link.resume();
      return;
    }
    case 'isolate':
      env.isolateServer!(server, f.blackhole ? 'silent' : 'cut');
      await delay(f.holdMs);
      env.healServers!();
      return;
    case 'blip': {
      // Every slot's link to that server, so a process started meanwhile meets the blip too.
      const links = cluster.slots.map((s) => s.links[server]!);
      for (const link of links) {
        if (f.blackhole) link.blackhole();
        else link.cut();
      }
      await delay(f.holdMs);
      for (const link of links) link.resume();
      return;
    }
    case 'step-down':
      slot!.proc.send({ type: 'stepDown' });
      return;
    case 'failover': {
      const done = await env.failover!(failoverKindFor(f.holdMs, env));
      // Its own record: other faults of the episode may have been recorded meanwhile.
      entry.target = `primary (${done.kind}, switched in ${done.switchMs} ms)`;
      return;
    }
  }
}

/** The server a server or link fault hits, resolved when it starts. */
async function resolveServer(cluster: FaultCluster, f: PlannedFault, slot: CandidateSlot | null): Promise<number> {
  if (f.server === 'ensemble-leader') return (await cluster.env.ensembleLeader?.()) ?? 0;
  if (f.server === "client's") {
    // The server whose proxy carries the candidate's connection (a ZooKeeper client uses one).
    const used = slot ? slot.links.findIndex((l) => l.openConnections() > 0) : -1;
    return used >= 0 ? used : 0;
  }
  return f.server;
}
