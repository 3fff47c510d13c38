import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort, freezeProcess, waitForPort } from '@conclave/test-harness/tools';
import { startEtcdPeerLinks, type EtcdPeerLinks } from './etcd-peer-links';

/** The etcd binary: ETCD_BINARY, else `etcd` on PATH (Debian's etcd-server package). */
export const ETCD_BINARY = process.env.ETCD_BINARY ?? 'etcd';

/** One member of a private etcd cluster. */
export interface EtcdMember {
  readonly index: number;
  readonly name: string;
  /** Client port on 127.0.0.1. */
  readonly port: number;
  /** SIGKILL: a crash. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data directory (after kill()). */
  restart(): Promise<void>;
  /** SIGSTOP: frozen, sockets open, nothing answers. Resolves once every thread stopped. */
  pause(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  /** `etcd://127.0.0.1:p1,127.0.0.1:p2…` */
  readonly url: string;
  /**
   * With `peerLinks`: member `index` cut from its peers, both ways (`silent`: bytes dropped,
   * sockets open; `cut`: reset and refused), while its clients still reach it.
   */
  isolate(index: number, how?: 'silent' | 'cut'): void;
  /** Ends `isolate`. */
  heal(): void;
  /** The member the others follow (the Raft leader most members report), or null. */
  leaderIndex(): Promise<number | null>;
  /** Stops every member and removes the data directories. Idempotent. */
  stop(): Promise<void>;
}

export interface StartEtcdOptions {
  /** Members. Default 1. */
  members?: number;
  /**
   * Raft heartbeat interval and election timeout, ms. Default 50 / 600: etcd's smallest lease TTL
   * is about 1.5 election timeouts, so these let a 1 s TTL be granted as asked.
   */
  heartbeatMs?: number;
  electionTimeoutMs?: number;
  /** Longest wait for the members to serve, ms. Default 30 000. */
  startTimeoutMs?: number;
  /** Peer traffic through proxies that can isolate one member (see `EtcdPeerLinks`). Default false. */
  peerLinks?: boolean;
  /**
   * Turns etcd's authentication on once the cluster serves: user `root` (role `root`) with this
   * password. Every client then needs credentials; add users and roles as `root`. Default: off.
   */
  rootPassword?: string;
}

/**
 * A private etcd cluster for tests: every member on free loopback ports, its data directory under
 * the system's temp directory (removed by `stop()`), with short Raft timings.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdCluster> {
  const n = options.members ?? 1;
  const heartbeat = options.heartbeatMs ?? 50;
  const election = options.electionTimeoutMs ?? 600;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const root = await mkdtemp(join(tmpdir(), 'conclave-etcd-'));
  const specs: Array<{ name: string; port: number; peerPort: number; dir: string }> = [];
  for (let i = 0; i < n; i++) specs.push({ name: `m${i}`, port: await freePort(), peerPort: await freePort(), dir: join(root, `m${i}`) });
  let links: EtcdPeerLinks | null = null;
  if (options.peerLinks) {
    try {
      links = await startEtcdPeerLinks(specs.map((s) => s.peerPort));
    } catch (err) {
      await rm(root, { recursive: true, force: true });
      throw err;
    }
  }
  // Peers reach a member at its advertised peer URL: its proxy, with peerLinks.
  const advertisedPeer = (i: number) => `http://127.0.0.1:${links ? links.advertisedPort(i) : specs[i]!.peerPort}`;
  const initialCluster = specs.map((s, i) => `${s.name}=${advertisedPeer(i)}`).join(',');
  const children: Array<ChildProcess | null> = specs.map(() => null);
  const failures: Array<Promise<never> | null> = specs.map(() => null);
  let stopped = false;

  const exited = (proc: ChildProcess | null) =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
    });

  const launch = (i: number) => {
    const s = specs[i]!;
    const client = `http://127.0.0.1:${s.port}`;
    const peer = `http://127.0.0.1:${s.peerPort}`;
    const advertised = advertisedPeer(i);
    const env = { ...process.env };
    // etcd 3.4 refuses to start on some architectures unless told to.
    if (process.arch !== 'x64' && env.ETCD_UNSUPPORTED_ARCH === undefined) env.ETCD_UNSUPPORTED_ARCH = process.arch;
    const proc = spawn(
      ETCD_BINARY,
      [
        '--name', s.name,
        '--data-dir', s.dir,
        '--listen-client-urls', client,
        '--advertise-client-urls', client,
        '--listen-peer-urls', peer,
        '--initial-advertise-peer-urls', advertised,
        '--initial-cluster', initialCluster,
        '--initial-cluster-state', 'new',
        '--initial-cluster-token', `conclave-${root}`,
        '--heartbeat-interval', String(heartbeat),
        '--election-timeout', String(election),
        '--log-level', 'error',
        '--logger', 'zap',
      ],
      { stdio: 'ignore', env },
    );
    // A binary that cannot start (missing: ENOENT) or a member that exits before it listens
    // fails the start at once, not after the port wait.
    failures[i] = new Promise<never>((_, reject) => {
      proc.once('error', (err) => reject(new Error(`${ETCD_BINARY} could not start (${err.message}); Debian: apt-get install etcd-server, or set ETCD_BINARY`)));
      proc.once('exit', (code, signal) => reject(new Error(`etcd member ${s.name} exited (${code ?? signal}) before it listened on ${s.port}`)));
    });
    failures[i]!.catch(() => undefined);
    children[i] = proc;
    links?.setPid(i, proc.pid ?? null);
    proc.once('exit', () => {
      if (children[i] === proc || children[i] === null) links?.setPid(i, null);
    });
    return proc;
  };

  const ready = async (i: number) => {
    const s = specs[i]!;
    await Promise.race([waitForPort(s.port, '127.0.0.1', startTimeoutMs), failures[i]!]);
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(
      children.map(async (proc, i) => {
        children[i] = null;
        if (!proc) return;
        proc.kill('SIGCONT');
        proc.kill('SIGKILL');
        await exited(proc);
      }),
    );
    await links?.close();
    await rm(root, { recursive: true, force: true });
  };

  try {
    specs.forEach((_, i) => launch(i));
    await Promise.all(specs.map((_, i) => ready(i)));
    await untilServing(specs.map((s) => s.port), startTimeoutMs);
    if (options.rootPassword !== undefined) await enableAuth(specs.map((s) => s.port), options.rootPassword);
  } catch (err) {
    await stop();
    throw err;
  }

  const members: EtcdMember[] = specs.map((s, i) => ({
    index: i,
    name: s.name,
    port: s.port,
    async kill() {
      const proc = children[i];
      children[i] = null;
      if (!proc) return;
      proc.kill('SIGKILL');
      await exited(proc);
    },
    async restart() {
      if (stopped) throw new Error('the cluster was stopped');
      if (children[i]) return;
      launch(i);
      await ready(i);
    },
    async pause() {
      const proc = children[i];
      if (proc) await freezeProcess(proc);
    },
    resume() {
      children[i]?.kill('SIGCONT');
    },
  }));

  return {
    members,
    url: `etcd://${specs.map((s) => `127.0.0.1:${s.port}`).join(',')}`,
    isolate(index, how) {
      if (!links) throw new Error('start the cluster with { peerLinks: true } to isolate a member');
      if (!Number.isInteger(index) || index < 0 || index >= n) throw new Error(`no member ${index}`);
      links.isolate(index, how);
    },
    heal() {
      links?.heal();
    },
    leaderIndex: () => leaderIndex(specs.map((s) => s.port)),
    stop,
  };
}

/**
 * Asks every member (1 s each) for its status: its own id and the leader it follows. The leader
 * most of them report, as an index; null when no majority agrees.
 */
async function leaderIndex(ports: number[]): Promise<number | null> {
  const answers = await Promise.all(
    ports.map(async (port) => {
      const client = new Etcd3({ hosts: [`127.0.0.1:${port}`], dialTimeout: 1000 });
      try {
        const status = await client.maintenance.status({ deadline: new Date(Date.now() + 1000) });
        return { self: String(status.header.member_id), leader: String(status.leader) };
      } catch {
        return null;
      } finally {
        client.close();
      }
    }),
  );
  const votes = new Map<string, number>();
  for (const a of answers) if (a && a.leader !== '0') votes.set(a.leader, (votes.get(a.leader) ?? 0) + 1);
  for (const [leader, count] of votes) {
    if (count * 2 <= ports.length) continue;
    const i = answers.findIndex((a) => a?.self === leader);
    return i < 0 ? null : i;
  }
  return null;
}

/** Creates the `root` user and role (etcd's requirement) and turns authentication on. */
async function enableAuth(ports: number[], rootPassword: string): Promise<void> {
  const client = new Etcd3({ hosts: ports.map((p) => `127.0.0.1:${p}`) });
  try {
    await client.role('root').create();
    await client.user('root').create(rootPassword);
    await client.user('root').addRole('root');
    await client.auth.authEnable({});
  } finally {
    client.close();
  }
}

/** Waits until a write succeeds (the cluster has a leader and a quorum). */
async function untilServing(ports: number[], timeoutMs: number): Promise<void> {
  const client = new Etcd3({ hosts: ports.map((p) => `127.0.0.1:${p}`) });
  const until = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.put('conclave-probe').value('1').options({ deadline: new Date(Date.now() + 2000) }).exec();
        return;
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.close();
  }
}
