/**
 * Private ZooKeeper servers for tests: each one runs in its own JVM, on free loopback ports, with
 * its own config and data directory under a temporary directory, so tests never meet a shared or
 * system server. The JVM is started directly (not through zkServer.sh) so that this process owns
 * it and can stop, kill or restart it.
 *
 * Needs `java` and ZooKeeper's jars: Debian's `zookeeper` package (`npm test` installs it: scripts/prepare-test-env.cjs), or
 * `ZOOKEEPER_CLASSPATH` set to a classpath that holds zookeeper.jar and its dependencies.
 */

export interface ZookeeperServerOptions {
  /** ZooKeeper's tick, ms. Default 200, so session timeouts of 0.4–10 s are allowed. */
  tickTimeMs?: number;
  /** Smallest session timeout the server grants, ms. Default 2 × tickTimeMs. */
  minSessionTimeoutMs?: number;
  /** Largest session timeout the server grants, ms. Default 50 × tickTimeMs. */
  maxSessionTimeoutMs?: number;
  /** How long to wait for the server to serve, ms. Default 60 000 (JVM start-up is slow on CI). */
  startTimeoutMs?: number;
  /**
   * The JVM's largest heap, MiB. Default 128: enough for tests, thin for thousands of elections
   * (the server keeps every node, watch and recent transaction in memory).
   */
  heapMb?: number;
  /**
   * Lines added to the end of `zoo.cfg`, e.g. `['DigestAuthenticationProvider.enabled=false']`
   * (ZooKeeper turns a key it does not know into the system property `zookeeper.<key>`). Default none.
   */
  config?: string[];
}

/** One ZooKeeper JVM. */
export interface ZookeeperServer {
  /** Client port on 127.0.0.1. */
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly connect: string;
  /** Whether the JVM is running. */
  readonly running: boolean;
  /** Starts the JVM again (same port, same data) after stop/kill. Resolves once it serves. */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited after a few seconds. Resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGKILL at once (a crash). Resolves once it has exited. */
  kill(): Promise<void>;
  /** stop() then start(): sessions survive if clients reconnect within their timeout. */
  restart(): Promise<void>;
  /** Kills the JVM and removes its directory. Idempotent. */
  close(): Promise<void>;
  /** What `srvr` reports: 'leader', 'follower', 'standalone', or null when not serving. */
  mode(): Promise<string | null>;
  /** Resolves once the server serves requests (an ensemble member: once it is in a quorum). */
  waitUntilServing(): Promise<void>;
}

export interface ZookeeperEnsembleOptions extends ZookeeperServerOptions {
  /**
   * Route every peer link (quorum and election connections, one proxy per ordered pair of
   * members and port) through a TCP proxy, so that `isolate()` can cut a member off from its
   * peers while its clients still reach it. Default false.
   */
  peerProxies?: boolean;
}

/** Three ZooKeeper JVMs forming one ensemble on loopback. */
export interface ZookeeperEnsemble {
  readonly servers: readonly ZookeeperServer[];
  /** Every server's client address: `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`. */
  readonly connect: string;
  /**
   * Cuts `servers[index]` off from its peers, clients untouched (needs `peerProxies`).
   * `'silent'` (default): every peer link to and from it stops moving bytes with its sockets
   * left open, a network partition as both ends see it: a follower keeps serving its clients
   * from its last state until it gives the leader up (`syncLimit` ticks). `'cut'`: those links
   * are reset and new ones refused, which every end notices at once.
   */
  isolate(index: number, how?: 'silent' | 'cut'): void;
  /** Ends every isolation: peer links flow again (held bytes are delivered). */
  heal(): void;
  /** Kills every JVM and removes the directories. Idempotent. */
  close(): Promise<void>;
}
