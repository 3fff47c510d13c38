import type { Prng } from '../faults/prng';
import type { FailoverKind, FaultEnvironment, FaultTopology } from './fault-environment';

/**
 * The fault catalogue.
 * - `kill`: SIGKILL of a candidate (the leader 70 % of the time); a new process with a new id
 *   takes its slot after 0–500 ms.
 * - `freeze`: SIGSTOP then SIGCONT (a GC pause): 1.1–2 × lease (past the lease), or 0.2–0.6 ×
 *   lease (within it: nothing should change).
 * - `partition`: the candidate's proxy drops every byte both ways, sockets open (silent
 *   partition), 0.5–2.5 × lease; the other candidates still reach the server.
 * - `cut`: the candidate's connections are reset and refused for 0.1–1.5 s.
 * - `delay`: 20 ms – lease/3 of latency on the candidate's link, both ways, for 1–4 s.
 * - `server-restart`: SIGKILL of one private server, down 0.2–2 s, started again on the same
 *   port (with its data, or empty where the topology has no persistence). With several servers:
 *   one of them (a minority); in an ensemble its leader 60 % of the time.
 * - `server-pause`: SIGSTOP of one server for 0.3–1.5 × lease (MariaDB and Redis only).
 * - `step-down`: the leader is told to step down (a graceful hand-over).
 * - `link` (several servers): one candidate's link to one server blackholed or cut (half each),
 *   0.5–2.5 × lease, its links to the others untouched; in an ensemble, the server its client
 *   is connected to.
 * - `isolate` (ensemble, when the launcher can): one server cut from its peers (silently or by
 *   resets, half each) while its clients still reach it, 0.3–1.2 × (the ensemble's election
 *   time + the session timeout); the server the leader's client uses 60 % of the time.
 * - `failover` (failover topologies): the primary is replaced, one of the environment's
 *   `failoverKinds` drawn (see `FailoverKind`); the environment restores a replica afterwards.
 * - `blip` (several servers; drawn on `migrate`): every candidate's link to one server
 *   blackholed or cut (half each) for 1.5–2.5 s, one side of a migration at a time; the server
 *   itself runs on.
 */
export type FaultKind =
  | 'kill'
  | 'freeze'
  | 'partition'
  | 'cut'
  | 'delay'
  | 'server-restart'
  | 'server-pause'
  | 'step-down'
  | 'link'
  | 'isolate'
  | 'blip'
  | 'failover';
export const FAULT_KINDS: readonly FaultKind[] = [
  'kill',
  'freeze',
  'partition',
  'cut',
  'delay',
  'server-restart',
  'server-pause',
  'step-down',
  'link',
  'isolate',
  'blip',
  'failover',
];

export const DEFAULT_FAULT_WEIGHTS: Readonly<Record<FaultKind, number>> = {
  kill: 12,
  freeze: 16,
  partition: 16,
  cut: 12,
  delay: 12,
  'server-restart': 6,
  'server-pause': 6,
  'step-down': 8,
  // Drawn only where the topology has several servers (see `weightsFor`).
  link: 14,
  isolate: 8,
  // Drawn only where a backend's kit asks for it (`BackendKit.faultWeights`).
  blip: 0,
  // Drawn only in failover topologies (see `TOPOLOGY_FAULT_WEIGHTS`).
  failover: 0,
};

/**
 * Where a topology exists for its servers' faults, those are drawn more often than on one
 * durable server: a restart that loses the data, a master or ensemble member lost.
 */
export const TOPOLOGY_FAULT_WEIGHTS: Readonly<Record<FaultTopology, Partial<Record<FaultKind, number>>>> = {
  single: {},
  'duplicate-id': {},
  'no-persistence': { 'server-restart': 40 },
  quorum: { 'server-restart': 16, 'server-pause': 10 },
  ensemble: { 'server-restart': 10, isolate: 18, link: 18 },
  sentinel: { failover: 30, 'server-restart': 0, 'server-pause': 0 },
  replicated: { failover: 30, 'server-restart': 0, 'server-pause': 0 },
};

/** The catalogue's weights for the topology, minus the faults the environment cannot inflict. */
export function weightsFor(
  env: FaultEnvironment,
  kitWeights: Partial<Record<FaultKind, number>> | undefined,
  overrides: Partial<Record<FaultKind, number>> | undefined,
): Record<FaultKind, number> {
  const weights: Record<FaultKind, number> = {
    ...DEFAULT_FAULT_WEIGHTS,
    ...TOPOLOGY_FAULT_WEIGHTS[env.topology],
    ...kitWeights,
    ...overrides,
  };
  if (!env.servers.some((s) => s.pause)) weights['server-pause'] = 0;
  if (env.servers.length < 2) weights.link = weights.blip = 0;
  if (!env.isolateServer) weights.isolate = 0;
  if (!env.failover || !env.failoverKinds?.length) weights.failover = 0;
  return weights;
}

export function holdFor(kind: FaultKind, rng: Prng, leaseMs: number, env: FaultEnvironment): number {
  switch (kind) {
    case 'kill':
      return rng.int(0, 500);
    case 'freeze':
      return rng.chance(0.75) ? Math.round(leaseMs * rng.between(1.1, 2)) : Math.round(leaseMs * rng.between(0.2, 0.6));
    case 'partition':
      return Math.round(leaseMs * rng.between(0.5, 2.5));
    case 'cut':
      return rng.int(100, 1500);
    case 'delay':
      return rng.int(1000, 4000);
    case 'server-restart':
      return rng.int(200, 2000);
    case 'server-pause':
      return Math.round(leaseMs * rng.between(0.3, 1.5));
    case 'step-down':
      return 0;
    case 'link':
      return Math.round(leaseMs * rng.between(0.5, 2.5));
    case 'isolate':
      // Up to past the time the others take to give the member up and elect without it (drawn
      // only where the environment can isolate a server: an ensemble, which says both times).
      return Math.round(((env.serverElectionMs ?? 0) + (env.sessionTimeoutMs ?? leaseMs)) * rng.between(0.3, 1.2));
    case 'blip':
      return rng.int(1500, 2500);
    case 'failover':
      // Which kind is drawn from the hold (see `failoverKindFor`); the failover takes its own time.
      return rng.int(0, 999);
  }
}

/** Latency of a `delay` fault, drawn when it starts (the schedule's other draws are fixed). */
export function latencyFor(rng: Prng, leaseMs: number): number {
  return rng.int(20, Math.round(leaseMs / 3));
}

/** The failover kind a `failover` fault stages, fixed by its drawn hold (so a seed replays it). */
export function failoverKindFor(holdMs: number, env: FaultEnvironment): FailoverKind {
  const kinds = env.failoverKinds ?? [];
  return kinds[holdMs % kinds.length]!;
}

