import type { BackendKit } from '../kits/backend-kit';
import { resolveBackendKit } from '../kits/load-backend-kit';

/**
 * The deployment a fault run stages.
 * - `single`: one private server (Redis with AOF `appendfsync always`, as the Redis README asks
 *   for a token guarantee across crashes; MariaDB; a standalone ZooKeeper).
 * - `no-persistence` (Redis): one master with `--save "" --appendonly no`, the way many run a
 *   cache-class Redis; a restart comes back empty.
 * - `quorum` (Redis): three independent masters without persistence (Redlock, `redis://h1,h2,h3`),
 *   each candidate behind its own proxy to each master.
 * - `ensemble` (ZooKeeper): three servers in one ensemble, each candidate behind its own proxy to
 *   each server (the client picks one and moves on when it loses it).
 * - `duplicate-id`: the `single` server, but two candidate processes share one candidate id (a
 *   pod restarted under its old name while the old process still runs).
 * - `sentinel` (Redis): a master, a replica and Sentinel; candidates find the master through
 *   Sentinel, and a failover promotes the replica (see `FaultEnvironment.failover`).
 * - `replicated` (MySQL/MariaDB, PostgreSQL): a primary and an asynchronous replica behind one
 *   endpoint (a TCP proxy, as a managed database's DNS name), which a failover moves to the
 *   promoted replica.
 * Which of them a backend stages is its kit's to say (`BackendKit.topologies`).
 */
export type FaultTopology = 'single' | 'no-persistence' | 'quorum' | 'ensemble' | 'duplicate-id' | 'sentinel' | 'replicated';
export const FAULT_TOPOLOGIES: readonly FaultTopology[] = ['single', 'no-persistence', 'quorum', 'ensemble', 'duplicate-id', 'sentinel', 'replicated'];

/**
 * How a failover topology's primary is replaced (`FaultEnvironment.failover`).
 * - `kill`: the primary is SIGKILLed with its replica caught up; the replica is promoted and the
 *   endpoint (or Sentinel) moves to it.
 * - `kill-lagging`: replication is stalled first and the primary goes on taking writes, so the
 *   promoted replica misses the latest terms; then as `kill`.
 * - `graceful`: a planned switch-over (`SENTINEL FAILOVER`; SQL: the replica catches up and is
 *   promoted, the endpoint moves, and the old primary goes read-only).
 * - `cut-off`: the old primary keeps running and stays writable, cut off from its replica (and
 *   Sentinel); clients already connected to it stay connected; the replica is promoted.
 */
export type FailoverKind = 'kill' | 'kill-lagging' | 'graceful' | 'cut-off';
export const FAILOVER_KINDS: readonly FailoverKind[] = ['kill', 'kill-lagging', 'graceful', 'cut-off'];

/** What one failover did, for the fault record. */
export interface FailoverRecord {
  kind: FailoverKind;
  /** Port of the server that is primary after it. */
  primaryPort: number;
  /** ms from the start of the fault until the new primary took writes (endpoint moved, or Sentinel switched). */
  switchMs: number;
}

/** One private server of a fault environment. */
export interface FaultServer {
  readonly index: number;
  /** Port of the server (what the candidates' proxies forward to). */
  readonly port: number;
  /** SIGKILL (a crash). */
  kill(): Promise<void>;
  /**
   * Start it again on the same port; resolves once it serves. With the data it had, unless the
   * environment's `restartLosesState` (a server without persistence comes back empty).
   */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT of the server, when the launcher can (not ZooKeeper's); pause resolves once it has stopped. */
  pause?(): Promise<void> | void;
  resume?(): void;
  /** What it is, where an environment mixes servers of several backends (fault records name it). */
  readonly label?: string;
}

/**
 * The private servers of a fault run, which the run may crash, restart and freeze without
 * touching the shared servers. Each candidate reaches each server through its own proxy
 * (`urlFor`), so one candidate can be cut off from one server only.
 */
export interface FaultEnvironment {
  /** The kind of the kit that started it (`BackendKit.kind`). */
  readonly kind: string;
  readonly topology: FaultTopology;
  readonly servers: readonly FaultServer[];
  /**
   * The backend URL of a candidate whose traffic to server i goes through the proxy on
   * `proxyPorts[i]`; `nodeKind` (one of `nodeKinds`, default the first) where there are several.
   */
  urlFor(proxyPorts: readonly number[], nodeKind?: string): string;
  /**
   * The kinds of candidate process a rolling deployment moves through, in order, where the
   * environment has them (`migrate`: old ZooKeeper-only, `dual`, `to-only`). Every candidate
   * starts as the first. Kinds two steps apart share no lease and never run together.
   */
  readonly nodeKinds?: readonly string[];
  /** Whether a restarted server comes back without its data (no persistence). */
  readonly restartLosesState: boolean;
  /**
   * How long after a fault heals a leader may take to appear, beyond `leaseMs` (documented in the
   * README): the Elector's follower backoff grows to at most `leaseMs` while the server is
   * unreachable, plus reconnection and process start-up on a slow machine; on ZooKeeper a dead
   * leader's node lasts its session timeout rather than its lease, and an ensemble also elects
   * its own leader; a Redis master that restarted empty grants no new term for one lease.
   */
  readonly recoveryMarginMs: number;
  /**
   * Where the backend keeps a client's session apart from its lease (ZooKeeper): how long the
   * servers keep a silent client's session, ms. Scenarios wait this long for a session to go.
   */
  readonly sessionTimeoutMs?: number;
  /**
   * Where the servers elect a leader of their own (an ensemble): how long they take to elect a
   * new one and resync after losing theirs, ms.
   */
  readonly serverElectionMs?: number;
  /** Ensemble only: the index of the server the ensemble currently follows, or null. */
  ensembleLeader?(): Promise<number | null>;
  /**
   * Ensemble only, when the launcher offers it: server i cut from its peers, its clients still
   * reach it; `silent` (links stop moving bytes, sockets open) or `cut` (reset and refused).
   */
  isolateServer?(index: number, how?: 'silent' | 'cut'): void;
  /** Ends `isolateServer`. */
  healServers?(): void;
  /**
   * Failover topologies (`sentinel`, `replicated`): replaces the primary (see `FailoverKind`);
   * resolves once the promoted replica takes writes where candidates reach it. Before the next
   * failover the environment gives the new primary a replica again (the next call waits for it).
   */
  failover?(kind: FailoverKind): Promise<FailoverRecord>;
  /** The failover kinds this environment stages (and the backend is safe under; see its README). */
  readonly failoverKinds?: readonly FailoverKind[];
  /** Stops every server and removes its data. Idempotent. */
  close(): Promise<void>;

  // The first server, for the single-server scenarios.
  readonly serverPort: number;
  killServer(): Promise<void>;
  restartServer(): Promise<void>;
  pauseServer?(): Promise<void> | void;
  resumeServer?(): void;
}

/** Slack for reconnection, process start-up and scheduling on a slow shared machine, ms. */
export const RECOVERY_SLACK_MS = 2500;

/** What a kit starts: an environment before the harness adds its kind, topology and single-server shortcuts. */
export type FaultEnvironmentCore = Omit<FaultEnvironment, 'kind' | 'topology' | 'serverPort' | 'killServer' | 'restartServer' | 'pauseServer' | 'resumeServer'>;

/** A private database server a launcher started: crash, restart with its data, freeze, stop. */
export interface DurableServer {
  readonly port: number;
  kill(): Promise<void>;
  restart(): Promise<void>;
  pause(): Promise<void> | void;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * The environment of one durable server (a restart keeps its data): what a lease-row backend's
 * kit stages for `single` and `duplicate-id`. `urlFor` gets the port its candidates connect to.
 */
export function durableServerEnvironment(server: DurableServer, leaseMs: number, urlFor: (port: number) => string): FaultEnvironmentCore {
  return {
    servers: [
      {
        index: 0,
        port: server.port,
        kill: () => server.kill(),
        restart: () => server.restart(),
        pause: () => server.pause(),
        resume: () => server.resume(),
      },
    ],
    urlFor: (ports) => urlFor(ports[0]!),
    restartLosesState: false,
    recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
    close: () => server.stop(),
  };
}

function withFirstServer(env: Omit<FaultEnvironment, 'serverPort' | 'killServer' | 'restartServer' | 'pauseServer' | 'resumeServer'>): FaultEnvironment {
  const first = env.servers[0]!;
  return {
    ...env,
    serverPort: first.port,
    killServer: () => first.kill(),
    restartServer: () => first.restart(),
    ...(first.pause && first.resume ? { pauseServer: () => first.pause!(), resumeServer: () => first.resume!() } : {}),
  } as FaultEnvironment;
}

/** The private servers of `kit` (a kit, or its name: see `loadBackendKit`) in `topology`. */
export async function startFaultEnvironment(kit: BackendKit | string, leaseMs: number, topology: FaultTopology = 'single'): Promise<FaultEnvironment> {
  const k = await resolveBackendKit(kit);
  if (!k.topologies.includes(topology)) {
    throw new Error(`backend ${k.kind} stages the topologies ${k.topologies.join(', ')}, not ${topology}`);
  }
  const core = await k.startFaultEnvironment(leaseMs, topology);
  return withFirstServer({ ...core, kind: k.kind, topology });
}
