/**
 * The servers the bench runs against, and how it reads their operation counters.
 *
 * - redis: a private redis-server on a free port, so that only the bench's traffic is counted.
 * - mysql: a private mariadbd (own datadir, free port); if it cannot be started, the shared
 *   server at 127.0.0.1:3306 (then the Questions counter also sees other users' traffic, which
 *   the output says).
 * - zookeeper: a private standalone ZooKeeper (tick 100 ms) started through the test-harness
 *   launcher.
 */
import { Socket } from 'node:net';
import { createConnection, type Connection } from 'mysql2/promise';
import { CandidateProcess, RedisServer, fourLetterWord, startMariadb, startZookeeperServer, type CandidateConfig } from '@conclave/test-harness/tools';
import type { PeerKind } from './peers/peer-targets';
import type { BenchCandidate } from './scenarios';
import { onCleanup } from './util';

export type BackendKind = 'mysql' | 'redis' | 'zookeeper';
export const BACKEND_KINDS: readonly BackendKind[] = ['mysql', 'redis', 'zookeeper'];
/** A system the bench measures: one of conclave's backends, or a peer. */
export type SystemKind = BackendKind | PeerKind;

/** Server-side counters, the bench's own probes already subtracted. */
export interface ServerCounters {
  /** Operations the server executed: MySQL statements (Questions), Redis commands (commandstats calls), ZooKeeper packets received. */
  ops: number;
  /** Requests read from the network (Redis total_reads_processed); null where the server has no such counter. */
  reads: number | null;
}

export interface BenchTarget {
  kind: SystemKind;
  /** Starts one candidate process of this system (conclave's candidate, or a peer script). */
  startCandidate(config: CandidateConfig): Promise<BenchCandidate>;
  /**
   * What a candidate's `lease` reports leave off the lease the server granted (conclave: the
   * Elector's safety margin; peers report the server's lease as is).
   */
  leaseMarginMs: number;
  /** Port of the real server on 127.0.0.1. */
  port: number;
  /** Backend URL for `createBackend`, on `port` (the server's, or a proxy's in front of it). */
  url(port?: number): string;
  /** Reads the counters. */
  counters(): Promise<ServerCounters>;
  /** The server's name and version as it reports them, for the results. */
  version(): Promise<string>;
  /** What the counters are, for the output. */
  counterName: string;
  /** Where the server came from (private/shared), for the output. */
  description: string;
  close(): Promise<void>;
}

export type ServerTarget = Omit<BenchTarget, 'startCandidate' | 'leaseMarginMs'>;

/** The server for `kind`, driven by conclave's own candidate processes. */
export async function startTarget(kind: BackendKind, leaseMs: number): Promise<BenchTarget> {
  const server = await startServer(kind, leaseMs);
  return {
    ...server,
    startCandidate: (config) => CandidateProcess.start(config, 30_000),
    // The core's default safety margin for this lease. On ZooKeeper the server's lease is the
    // session (as long as the lease by default, ended that long after the last contact), while the
    // backend grants the Elector ⅔ of it: the rest is added back too.
    leaseMarginMs: Math.max(50, Math.ceil(leaseMs * 0.02)) + (kind === 'zookeeper' ? leaseMs - Math.floor((leaseMs * 2) / 3) : 0),
  };
}

/** Just the private server for `kind` (peers bring their own candidates). */
export async function startServer(kind: BackendKind, leaseMs: number): Promise<ServerTarget> {
  if (kind === 'redis') return startRedis();
  if (kind === 'mysql') return startMysql();
  return startZookeeper(leaseMs);
}

// ---- redis -----------------------------------------------------------------------------------

/** One `INFO all` on a fresh connection (inline command, bulk reply). */
function redisInfo(port: number, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let buf = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error('redis INFO timed out')));
    socket.once('error', fail);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      const len = Number(buf.subarray(1, eol).toString());
      if (buf.length >= eol + 2 + len) {
        socket.destroy();
        resolve(buf.subarray(eol + 2, eol + 2 + len).toString());
      }
    });
    socket.connect(port, '127.0.0.1', () => socket.write('INFO all\r\n'));
  });
}

/** Commands the backend's Lua scripts run (packages/redis/src/redis-scripts.ts); nothing else sends them here. */
const SCRIPT_INNER = new Set(['del', 'get', 'hget', 'hmget', 'hset', 'pexpire', 'pttl', 'publish', 'set', 'time', 'zadd', 'zrange', 'zrem', 'zremrangebyscore']);

async function startRedis(): Promise<ServerTarget> {
  const server = await RedisServer.start();
  const remove = onCleanup(() => server.kill());
  const port = server.port;
  return {
    kind: 'redis',
    port,
    url: (p = port) => `redis://127.0.0.1:${p}`,
    counterName: 'client commands (INFO commandstats calls of EVALSHA/EVAL and other top-level commands; commands run inside scripts and INFO excluded); network reads (total_reads_processed)',
    description: `private redis-server on 127.0.0.1:${port}`,
    async counters() {
      const info = await redisInfo(port);
      // Requests from clients: script calls and other top-level commands. commandstats also
      // counts the commands a Lua script runs (HSET, PEXPIRE, …): those are left out.
      let ops = 0;
      for (const m of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
        if (m[1] !== 'info' && !SCRIPT_INNER.has(m[1]!)) ops += Number(m[2]);
      }
      const reads = Number(/^total_reads_processed:(\d+)/m.exec(info)?.[1] ?? NaN);
      // Every probe is one network read (its own INFO); the caller subtracts per probe.
      return { ops, reads };
    },
    async version() {
      return `redis ${/^redis_version:(\S+)/m.exec(await redisInfo(port))?.[1] ?? 'unknown'}`;
    },
    async close() {
      remove();
      await server.kill();
    },
  };
}

// ---- mysql -----------------------------------------------------------------------------------

async function startMysql(): Promise<ServerTarget> {
  let port = 3306;
  let description = 'shared MariaDB on 127.0.0.1:3306 (Questions also counts other clients)';
  let stop: () => Promise<void> = async () => undefined;
  try {
    const server = await startMariadb({ startTimeoutMs: 90_000 });
    port = server.port;
    description = `private mariadbd on 127.0.0.1:${port}`;
    stop = () => server.stop();
  } catch (err) {
    console.error(`bench: private mariadbd did not start (${(err as Error).message}); using the shared server on 3306`);
  }
  const removeServer = onCleanup(stop);
  let probe: Connection | null = await createConnection({ host: '127.0.0.1', port, user: 'root', database: 'test' });
  const removeProbe = onCleanup(async () => {
    await probe?.end().catch(() => undefined);
  });
  return {
    kind: 'mysql',
    port,
    url: (p = port) => `mysql://root@127.0.0.1:${p}/test`,
    counterName: 'statements (SHOW GLOBAL STATUS Questions, probe excluded)',
    description,
    async counters() {
      const [rows] = await probe!.query("SHOW GLOBAL STATUS LIKE 'Questions'");
      const value = Number((rows as Array<{ Value: string }>)[0]?.Value ?? NaN);
      return { ops: value, reads: null };
    },
    async version() {
      const [rows] = await probe!.query('SELECT VERSION() AS v');
      return `mysql ${(rows as Array<{ v: string }>)[0]?.v ?? 'unknown'}`;
    },
    async close() {
      removeProbe();
      await probe?.end().catch(() => undefined);
      probe = null;
      removeServer();
      await stop();
    },
  };
}

// ---- zookeeper -------------------------------------------------------------------------------

const ZOOKEEPER_TICK_MS = 100;

async function startZookeeper(leaseMs: number): Promise<ServerTarget> {
  // The tick the ZooKeeper package README advises for 2–3 s leases: sessions expire on tick
  // boundaries, so the tick is what a take-over may add to the lease.
  const server = await startZookeeperServer({ tickTimeMs: ZOOKEEPER_TICK_MS });
  const remove = onCleanup(() => server.close());
  const port = server.port;
  return {
    kind: 'zookeeper',
    port,
    // No session option: the backend asks for a session as long as the lease, the ZooKeeper
    // "lease" (a crashed leader's node goes when its session expires).
    url: (p = port) => `zookeeper://127.0.0.1:${p}`,
    counterName: 'packets received (mntr zk_packets_received; includes session pings)',
    description: `private ZooKeeper (standalone, tickTime ${ZOOKEEPER_TICK_MS} ms) on 127.0.0.1:${port}, no session option (session timeout = leaseMs ${leaseMs})`,
    async counters() {
      const mntr = await fourLetterWord(port, 'mntr', 5000);
      const ops = Number(/zk_packets_received\s+(\d+)/.exec(mntr)?.[1] ?? NaN);
      return { ops, reads: null };
    },
    async version() {
      // `srvr` starts with "Zookeeper version: 3.x.y-…, built on …".
      const srvr = await fourLetterWord(port, 'srvr', 5000);
      // Some distribution builds leave an unexpanded `-${mvngit.commit.id}` after the number.
      const v = /version:\s*([^,\s]+)/i.exec(srvr)?.[1]?.replace(/-\$\{[^}]*\}$/, '');
      return `zookeeper ${v ?? 'unknown'}`;
    },
    async close() {
      remove();
      await server.close();
    },
  };
}
