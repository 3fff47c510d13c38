import type { FaultKind } from '../soak/fault-catalogue';
import type { FaultEnvironmentCore, FaultTopology } from '../soak/fault-environment';
import type { BenchServer } from './bench-server';

/**
 * What a backend package brings for its tests and the bench: how to start its private servers.
 * A package exports its kit from its `testing` entry (`@conclave/<pkg>/testing`), which the
 * package's main entry never loads, so a user of the backend does not pull in the harness. The
 * harness names no backend: it is given a kit, or loads one by module name (`loadBackendKit`).
 */
export interface BackendKit {
  /** The backend's provider kind (`BackendProvider.kind`), in names, labels and replay lines. */
  readonly kind: string;
  /**
   * The modules a candidate process loads its backend providers from (`CandidateConfig.providers`),
   * e.g. `['@conclave/redis']`; a backend built over others lists theirs too.
   */
  readonly providerModules: readonly string[];
  /** The topologies `startFaultEnvironment` stages: `single` always, the others where they make sense. */
  readonly topologies: readonly FaultTopology[];
  /**
   * Where fault clusters keep their guarded resource by default: a store kind of the harness's
   * guard on the shared servers (not this backend's private ones). Default `redis`.
   */
  readonly guard?: 'redis' | 'mysql';
  /** The catalogue's weights this backend's runs change (a run about something narrower than the whole catalogue). */
  readonly faultWeights?: Partial<Record<FaultKind, number>>;
  /** Candidate processes of a soak run when none is asked for. Default 3. */
  readonly defaultCandidates?: number;
  /** Starts the private servers of `topology` (one of `topologies`) for leases of `leaseMs`. */
  startFaultEnvironment(leaseMs: number, topology: FaultTopology): Promise<FaultEnvironmentCore>;
  /** Starts the private server the bench measures, with its operation counters. */
  startBenchServer?(leaseMs: number): Promise<BenchServer>;
  /**
   * Bench: the lease the backend grants the Elector when asked for `leaseMs`, before the core's
   * safety margin, where it is less (the bench adds the difference back to the lease reports).
   * Default `leaseMs`.
   */
  grantedLeaseMs?(leaseMs: number): number;
  /**
   * Bench: what an idle follower of one election may send per second without polling (a session's
   * keep-alive, say), for leases of `leaseMs`. Absent where followers poll by design: the bench
   * then sets no target for them.
   */
  followerAllowance?(leaseMs: number): FollowerAllowance;
}

/** The bench's target for an idle follower's traffic (see `BackendKit.followerAllowance`). */
export interface FollowerAllowance {
  /** Round trips per second at most. */
  readonly maxPerSec: number;
  /** The target as the results state it. */
  readonly target: string;
}

/** Whether `value` looks like a kit (what `loadBackendKit` looks for among a module's exports). */
export function isBackendKit(value: unknown): value is BackendKit {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<BackendKit>;
  return (
    typeof v.kind === 'string' &&
    Array.isArray(v.providerModules) &&
    Array.isArray(v.topologies) &&
    typeof v.startFaultEnvironment === 'function'
  );
}
