import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariadb } from '../servers/mysql-server';
import { RedisServer } from '../servers/redis-server';
import { startZookeeperEnsemble, startZookeeperServer, type ZookeeperEnsemble, type ZookeeperServerOptions } from '../servers/zookeeper-server';
import { startMigrationServers } from './migration-environment';

/**
 * The backend under test. `migrate` is `@conclave/migrate` moving an election from ZooKeeper to
 * MySQL: a private ZooKeeper and a private MariaDB, and candidates that a rolling deployment moves
 * between node kinds (see `FaultEnvironment.nodeKinds`).
 */
export type FaultBackendKind = 'mysql' | 'redis' | 'zookeeper' | 'migrate';
export const FAULT_BACKENDS: readonly FaultBackendKind[] = ['mysql', 'redis', 'zookeeper', 'migrate'];

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
 *   pod restarted under its old name while the old process still runs), on any backend.
 */
export type FaultTopology = 'single' | 'no-persistence' | 'quorum' | 'ensemble' | 'duplicate-id';
export const FAULT_TOPOLOGIES: readonly FaultTopology[] = ['single', 'no-persistence', 'quorum', 'ensemble', 'duplicate-id'];

/** The backends a topology can be staged on. */
export const TOPOLOGY_BACKENDS: Readonly<Record<FaultTopology, readonly FaultBackendKind[]>> = {
  single: FAULT_BACKENDS,
  'no-persistence': ['redis'],
  quorum: ['redis'],
  ensemble: ['zookeeper'],
  'duplicate-id': ['mysql', 'redis', 'zookeeper'],
};

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
  readonly kind: FaultBackendKind;
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
  /** Ensemble only: the index of the server the ensemble currently follows, or null. */
  ensembleLeader?(): Promise<number | null>;
  /**
   * Ensemble only, when the launcher offers it: server i cut from its peers, its clients still
   * reach it; `silent` (links stop moving bytes, sockets open) or `cut` (reset and refused).
   */
  isolateServer?(index: number, how?: 'silent' | 'cut'): void;
  /** Ends `isolateServer`. */
  healServers?(): void;
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

/**
 * Time a three-JVM ensemble on two shared cores takes to elect a new leader and resync after its
 * leader died or was isolated, ms (measured: 1–3 s; twice that on a busy machine).
 */
export const ENSEMBLE_ELECTION_MS = 6000;

/** ZooKeeper session timeout used by fault runs: a granted lease is 2/3 of it, i.e. `leaseMs`. */
export function zookeeperSessionTimeoutMs(leaseMs: number): number {
  return Math.ceil((leaseMs * 3) / 2);
}

/**
 * What the ensemble launcher offers, started with `peerProxies`, to cut one member from its
 * peers while its clients still reach it (a proxy on every peer link). Optional: a launcher
 * without it has no `isolate`, and the `isolate` fault is then not drawn.
 */
type IsolatingEnsemble = ZookeeperEnsemble & {
  isolate?(serverIndex: number, how?: 'silent' | 'cut'): void;
  heal?(): void;
};

/** An environment before `withFirstServer` adds the single-server shortcuts. */
export type FaultEnvironmentCore = Omit<FaultEnvironment, 'serverPort' | 'killServer' | 'restartServer' | 'pauseServer' | 'resumeServer'>;

function withFirstServer(env: FaultEnvironmentCore): FaultEnvironment {
  const first = env.servers[0]!;
  return {
    ...env,
    serverPort: first.port,
    killServer: () => first.kill(),
    restartServer: () => first.restart(),
    ...(first.pause && first.resume ? { pauseServer: () => first.pause!(), resumeServer: () => first.resume!() } : {}),
  } as FaultEnvironment;
}

function redisServer(index: number, server: RedisServer): FaultServer {
  return {
    index,
    port: server.port,
    kill: () => server.kill(),
    // restart() is kill-then-launch; after kill() it only launches.
    restart: async () => {
      if (!server.running) await server.restart();
    },
    pause: () => server.pause(),
    resume: () => server.resume(),
  };
}

export async function startFaultEnvironment(kind: FaultBackendKind, leaseMs: number, topology: FaultTopology = 'single'): Promise<FaultEnvironment> {
  if (!TOPOLOGY_BACKENDS[topology].includes(kind)) {
    throw new Error(`topology ${topology} runs on ${TOPOLOGY_BACKENDS[topology].join(', ')}, not ${kind}`);
  }
  if (kind === 'migrate') {
    const sessionTimeoutMs = zookeeperSessionTimeoutMs(leaseMs);
    return withFirstServer({
      kind,
      topology,
      ...(await startMigrationServers(sessionTimeoutMs)),
      // ZooKeeper's margin, the larger of the two sides': once both answer, a migration adds no
      // wait of its own. A dual candidate waits for `to` (half a lease at most, then gives `from`
      // back) or for the lease of whoever holds `to` (ended early by `to`'s wake-up) only while
      // `to` fails or is held, and a dual leader that loses either side gives the other back at
      // once; what is left is each side's own: a killed or cut-off holder's MySQL row lasts a
      // lease, its ZooKeeper node the session timeout, and the backoff after failed calls is at
      // most a lease.
      recoveryMarginMs: leaseMs + sessionTimeoutMs + RECOVERY_SLACK_MS,
    });
  }
  if (kind === 'redis' && (topology === 'no-persistence' || topology === 'quorum')) {
    // RedisServer's defaults: `--save "" --appendonly no`; a restart comes back empty.
    const count = topology === 'quorum' ? 3 : 1;
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < count; i++) servers.push(await RedisServer.start());
    } catch (err) {
      await Promise.all(servers.map((s) => s.kill()));
      throw err;
    }
    let closed = false;
    return withFirstServer({
      kind,
      topology,
      servers: servers.map((s, i) => redisServer(i, s)),
      urlFor: (ports) => `redis://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
      restartLosesState: true,
      // A master that restarted empty grants no new term for one lease (the restart fence).
      recoveryMarginMs: 2 * leaseMs + RECOVERY_SLACK_MS,
      async close() {
        if (closed) return;
        closed = true;
        await Promise.all(servers.map((s) => s.kill()));
      },
    });
  }
  if (kind === 'redis') {
    // AOF with fsync on every write, as the Redis README asks for a token guarantee across
    // crashes: a restarted server keeps the lease (with its absolute expiry) and the term counter.
    const dir = await mkdtemp(join(tmpdir(), 'conclave-redis-fault-'));
    const server = await RedisServer.start({ args: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] });
    let closed = false;
    return withFirstServer({
      kind,
      topology,
      servers: [redisServer(0, server)],
      urlFor: (ports) => `redis://127.0.0.1:${ports[0]}`,
      restartLosesState: false,
      recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
      async close() {
        if (closed) return;
        closed = true;
        await server.kill();
        await rm(dir, { recursive: true, force: true });
      },
    });
  }
  if (kind === 'mysql') {
    const server = await startMariadb();
    return withFirstServer({
      kind,
      topology,
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
      urlFor: (ports) => `mysql://root@127.0.0.1:${ports[0]}/test`,
      restartLosesState: false,
      recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
      close: () => server.stop(),
    });
  }
  const sessionTimeoutMs = zookeeperSessionTimeoutMs(leaseMs);
  const zkUrl = (ports: readonly number[]) =>
    `zookeeper://${ports.map((p) => `127.0.0.1:${p}`).join(',')}?sessionTimeoutMs=${sessionTimeoutMs}`;
  if (topology === 'ensemble') {
    const ensembleOptions: ZookeeperServerOptions & { peerProxies?: boolean } = { peerProxies: true };
    const ensemble: IsolatingEnsemble = await startZookeeperEnsemble(ensembleOptions);
    const canIsolate = typeof ensemble.isolate === 'function' && typeof ensemble.heal === 'function';
    return withFirstServer({
      kind,
      topology,
      servers: ensemble.servers.map((s, i) => ({ index: i, port: s.port, kill: () => s.kill(), restart: () => s.start() })),
      urlFor: zkUrl,
      restartLosesState: false,
      recoveryMarginMs: leaseMs + sessionTimeoutMs + ENSEMBLE_ELECTION_MS + RECOVERY_SLACK_MS,
      async ensembleLeader() {
        const modes = await Promise.all(ensemble.servers.map((s) => s.mode().catch(() => null)));
        const i = modes.indexOf('leader');
        return i < 0 ? null : i;
      },
      ...(canIsolate ? { isolateServer: (i: number, how?: 'silent' | 'cut') => ensemble.isolate!(i, how), healServers: () => ensemble.heal!() } : {}),
      close: () => ensemble.close(),
    });
  }
  const server = await startZookeeperServer();
  return withFirstServer({
    kind,
    topology,
    servers: [{ index: 0, port: server.port, kill: () => server.kill(), restart: () => server.start() }],
    urlFor: zkUrl,
    restartLosesState: false,
    recoveryMarginMs: leaseMs + sessionTimeoutMs + RECOVERY_SLACK_MS,
    close: () => server.close(),
  });
}
