import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { ZookeeperServer, ZookeeperServerOptions } from './zookeeper-server-types';

// One ZooKeeper JVM and its configuration: what the launchers in zookeeper-server.ts start.

const MAIN_CLASS = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const JVM_FLAGS = [
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

export interface ServerConfig {
  dir: string;
  clientPort: number;
  lines: string[];
  options: Required<ZookeeperServerOptions>;
}

export function resolveOptions(options: ZookeeperServerOptions): Required<ZookeeperServerOptions> {
  const tickTimeMs = options.tickTimeMs ?? 200;
  return {
    tickTimeMs,
    minSessionTimeoutMs: options.minSessionTimeoutMs ?? 2 * tickTimeMs,
    maxSessionTimeoutMs: options.maxSessionTimeoutMs ?? 50 * tickTimeMs,
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    heapMb: options.heapMb ?? 128,
    config: options.config ?? [],
  };
}

export function baseConfig(dir: string, clientPort: number, o: Required<ZookeeperServerOptions>): string[] {
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
    ...o.config,
  ];
}

export class JvmServer implements ZookeeperServer {
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
        `-Xmx${this.config.options.heapMb}m`,
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
