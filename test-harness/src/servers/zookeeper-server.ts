import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTcpProxy, type TcpProxy } from '../faults/tcp-proxy';
import { freePort } from './free-port';

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

const MAIN_CLASS = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const JVM_FLAGS = [
  '-Xmx128m',
  '-Xss512k',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xshare:auto',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=error',
  '-Dorg.slf4j.simpleLogger.logFile=System.err',
];

/** Every JVM started here, so a test process that dies without afterAll still kills them. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

/** The classpath holding ZooKeeper and its dependencies. Throws a clear error when absent. */
export function zookeeperClasspath(): string {
  const fromEnv = process.env.ZOOKEEPER_CLASSPATH;
  if (fromEnv) return fromEnv;
  // Debian's zookeeper.jar names its dependencies in its manifest's Class-Path. slf4j-simple,
  // at level error (JVM_FLAGS), writes only errors, to stderr, which start-up failures quote;
  // slf4j-nop at least keeps the server quiet (no "no SLF4J binding" warning, no log files).
  const debian = '/usr/share/java/zookeeper.jar';
  if (existsSync(debian)) {
    const binding = ['/usr/share/java/slf4j-simple.jar', '/usr/share/java/slf4j-nop.jar'].find((jar) => existsSync(jar));
    return binding ? `${debian}:${binding}` : debian;
  }
  for (const dir of ['/usr/share/zookeeper/lib', '/opt/zookeeper/lib']) {
    if (existsSync(dir)) {
      const jars = readdirSync(dir).filter((f) => f.endsWith('.jar'));
      if (jars.some((j) => j.startsWith('zookeeper'))) return jars.map((j) => join(dir, j)).join(':');
    }
  }
  throw new Error('ZooKeeper jars not found: install the Debian package zookeeper (npm test does, as root) or set ZOOKEEPER_CLASSPATH');
}

/** Sends a four-letter-word command and returns the answer ('' when nothing answered). */
export function fourLetterWord(port: number, command: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let answer = '';
    const done = () => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, done);
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.once('end', done);
    socket.once('close', done);
    socket.once('error', done);
    socket.connect(port, '127.0.0.1', () => socket.write(command));
  });
}

interface ServerConfig {
  dir: string;
  clientPort: number;
  lines: string[];
  options: Required<ZookeeperServerOptions>;
}

function resolveOptions(options: ZookeeperServerOptions): Required<ZookeeperServerOptions> {
  const tickTimeMs = options.tickTimeMs ?? 200;
  return {
    tickTimeMs,
    minSessionTimeoutMs: options.minSessionTimeoutMs ?? 2 * tickTimeMs,
    maxSessionTimeoutMs: options.maxSessionTimeoutMs ?? 50 * tickTimeMs,
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
  };
}

function baseConfig(dir: string, clientPort: number, o: Required<ZookeeperServerOptions>): string[] {
  return [
    `tickTime=${o.tickTimeMs}`,
    `minSessionTimeout=${o.minSessionTimeoutMs}`,
    `maxSessionTimeout=${o.maxSessionTimeoutMs}`,
    `dataDir=${join(dir, 'data')}`,
    `clientPort=${clientPort}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=mntr,ruok,srvr',
    // Snapshots and purges are irrelevant for short tests; a small preallocation keeps disk use low.
    'preAllocSize=1024',
    'snapCount=100000',
    'maxClientCnxns=0',
  ];
}

class JvmServer implements ZookeeperServer {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly config: ServerConfig) {
    mkdirSync(join(config.dir, 'data'), { recursive: true });
    writeFileSync(join(config.dir, 'zoo.cfg'), `${config.lines.join('\n')}\n`);
  }

  get port(): number {
    return this.config.clientPort;
  }

  get connect(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Spawns the JVM without waiting (an ensemble starts its members together). */
  spawn(): void {
    if (this.closed) throw new Error('this ZooKeeper server was closed');
    if (this.child) return;
    const child = spawn(
      'java',
      [
        ...JVM_FLAGS,
        `-Dzookeeper.log.dir=${this.config.dir}`,
        '-Dzookeeper.jmx.log4j.disable=true',
        '-cp',
        zookeeperClasspath(),
        MAIN_CLASS,
        join(this.config.dir, 'zoo.cfg'),
      ],
      { cwd: this.config.dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    // Keep the last lines of stderr for the error message if it never serves.
    let tail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-2000);
    });
    track(child);
    this.child = child;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        tail += `\n[the JVM exited with ${signal ? `signal ${signal}` : `code ${code}`}]`;
        if (this.child === child) this.child = null;
        resolve();
      });
      child.once('error', (err) => {
        tail += `\n${String(err)}`;
        if (this.child === child) this.child = null;
        resolve();
      });
    });
    this.stderrTail = () => tail;
  }

  private stderrTail: () => string = () => '';

  async waitUntilServing(): Promise<void> {
    const until = Date.now() + this.config.options.startTimeoutMs;
    for (;;) {
      if (!this.child) throw new Error(`ZooKeeper on port ${this.port} exited during start-up:\n${this.stderrTail()}`);
      // ruok answers imok before the server serves (and before an ensemble member has joined a
      // quorum); srvr reports a Mode only once requests are served.
      const srvr = await fourLetterWord(this.port, 'srvr');
      if (/Mode: (leader|follower|standalone)/.test(srvr)) return;
      if (Date.now() > until) {
        throw new Error(`ZooKeeper on port ${this.port} did not serve within ${this.config.options.startTimeoutMs} ms:\n${this.stderrTail()}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  async mode(): Promise<string | null> {
    if (!this.child) return null;
    const m = /Mode: (\w+)/.exec(await fourLetterWord(this.port, 'srvr'));
    return m ? m[1]! : null;
  }

  async start(): Promise<void> {
    this.spawn();
    try {
      await this.waitUntilServing();
    } catch (err) {
      await this.kill();
      throw err;
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.kill();
  }
}

/**
 * Starts one standalone ZooKeeper on a free loopback port. Call `close()` in afterAll (it kills
 * the JVM even when a test failed) — and start it once per test file: a JVM takes seconds to start.
 */
export async function startZookeeperServer(options: ZookeeperServerOptions = {}): Promise<ZookeeperServer> {
  const o = resolveOptions(options);
  const dir = mkdtempSync(join(tmpdir(), 'conclave-zk-'));
  const clientPort = await freePort();
  const server = new JvmServer({ dir, clientPort, lines: baseConfig(dir, clientPort, o), options: o });
  try {
    await server.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return withCleanup(server, dir);
}

/**
 * Starts a three-server ensemble on loopback (QuorumPeerMain, one myid and one config per
 * member, distinct client, quorum and election ports). Resolves once every member serves; stop
 * one with `ensemble.servers[i].stop()` and the other two keep a quorum.
 *
 * With `peerProxies`, each member's config names its peers at the addresses of proxies of its
 * own (member i reaches member j through proxies i→j, one for the quorum port, one for the
 * election port), while its own line keeps the ports it listens on, so every connection a
 * member opens to a peer goes through a proxy the test controls.
 */
export async function startZookeeperEnsemble(options: ZookeeperEnsembleOptions = {}): Promise<ZookeeperEnsemble> {
  const o = resolveOptions(options);
  const root = mkdtempSync(join(tmpdir(), 'conclave-zk-ensemble-'));
  const ports: Array<{ client: number; quorum: number; election: number }> = [];
  for (let i = 0; i < 3; i++) {
    ports.push({ client: await freePort(), quorum: await freePort(), election: await freePort() });
  }
  /** links[i][j]: the proxies member i reaches member j through (none for i === j). */
  const links: Array<Array<{ quorum: TcpProxy; election: TcpProxy } | null>> = [];
  const proxies: TcpProxy[] = [];
  const closeProxies = async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  };
  try {
    for (let i = 0; i < 3; i++) {
      const row: Array<{ quorum: TcpProxy; election: TcpProxy } | null> = [];
      for (let j = 0; j < 3; j++) {
        if (i === j || !options.peerProxies) {
          row.push(null);
          continue;
        }
        const quorum = await startTcpProxy({ targetPort: ports[j]!.quorum });
        proxies.push(quorum);
        const election = await startTcpProxy({ targetPort: ports[j]!.election });
        proxies.push(election);
        row.push({ quorum, election });
      }
      links.push(row);
    }
  } catch (err) {
    await closeProxies();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const servers = ports.map((p, i) => {
    const dir = join(root, `server-${i + 1}`);
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'data', 'myid'), `${i + 1}\n`);
    const members = ports.map((q, j) => {
      const via = links[i]![j];
      return via
        ? `server.${j + 1}=127.0.0.1:${via.quorum.port}:${via.election.port}`
        : `server.${j + 1}=127.0.0.1:${q.quorum}:${q.election}`;
    });
    const lines = [
      ...baseConfig(dir, p.client, o),
      // Quorum timing in ticks: generous, because the three JVMs share two slow cores.
      'initLimit=50',
      'syncLimit=25',
      'standaloneEnabled=false',
      'reconfigEnabled=false',
      ...members,
    ];
    return new JvmServer({ dir, clientPort: p.client, lines, options: o });
  });
  const close = async () => {
    await Promise.all(servers.map((s) => s.close()));
    await closeProxies();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    servers.forEach((s) => s.spawn());
    await Promise.all(servers.map((s) => s.waitUntilServing()));
  } catch (err) {
    await close();
    throw err;
  }
  const peerLinksOf = (index: number): TcpProxy[] => {
    if (!options.peerProxies) throw new Error('start the ensemble with { peerProxies: true } to isolate a member');
    if (!Number.isInteger(index) || index < 0 || index >= servers.length) throw new Error(`no member ${index}`);
    return links.flatMap((row, i) =>
      row.flatMap((via, j) => (via && (i === index || j === index) ? [via.quorum, via.election] : [])),
    );
  };
  return {
    servers,
    connect: servers.map((s) => s.connect).join(','),
    isolate(index, how = 'silent') {
      for (const proxy of peerLinksOf(index)) {
        if (how === 'cut') proxy.cut();
        else proxy.blackhole();
      }
    },
    heal() {
      if (!options.peerProxies) return;
      for (const proxy of proxies) proxy.resume();
    },
    close,
  };
}

function withCleanup(server: JvmServer, dir: string): ZookeeperServer {
  const close = server.close.bind(server);
  server.close = async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  return server;
}
