import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariadb } from '../servers/mysql-server';
import { RedisServer } from '../servers/redis-server';
import { startZookeeperServer } from '../servers/zookeeper-server';

export type FaultBackendKind = 'mysql' | 'redis' | 'zookeeper';
export const FAULT_BACKENDS: readonly FaultBackendKind[] = ['mysql', 'redis', 'zookeeper'];

/**
 * One private server for a fault run, which the run may crash, restart and freeze without
 * touching the shared servers. Candidates reach it through their own proxies (`urlFor`).
 */
export interface FaultEnvironment {
  readonly kind: FaultBackendKind;
  /** Port of the private server (what the proxies forward to). */
  readonly serverPort: number;
  /** The backend URL of a candidate whose traffic goes through the proxy on `proxyPort`. */
  urlFor(proxyPort: number): string;
  /** SIGKILL the server (a crash). */
  killServer(): Promise<void>;
  /** Start it again on the same port with the same data; resolves once it serves. */
  restartServer(): Promise<void>;
  /** SIGSTOP / SIGCONT of the server, when the launcher can (not ZooKeeper's). */
  pauseServer?(): void;
  resumeServer?(): void;
  /**
   * How long after a fault heals a leader may take to appear, beyond `leaseMs` (documented in the
   * README): the Elector's follower backoff grows to at most `leaseMs` while the server is
   * unreachable, plus reconnection and process start-up on a slow machine; on ZooKeeper a dead
   * leader's node lasts its session timeout rather than its lease.
   */
  readonly recoveryMarginMs: number;
  /** Stops the server and removes its data. Idempotent. */
  close(): Promise<void>;
}

/** Slack for reconnection, process start-up and scheduling on a slow shared machine, ms. */
export const RECOVERY_SLACK_MS = 2500;

/** ZooKeeper session timeout used by fault runs: a granted lease is 2/3 of it, i.e. `leaseMs`. */
export function zookeeperSessionTimeoutMs(leaseMs: number): number {
  return Math.ceil((leaseMs * 3) / 2);
}

export async function startFaultEnvironment(kind: FaultBackendKind, leaseMs: number): Promise<FaultEnvironment> {
  if (kind === 'redis') {
    // AOF with fsync on every write, as the Redis README asks for a token guarantee across
    // crashes: a restarted server keeps the lease (with its absolute expiry) and the term counter.
    const dir = await mkdtemp(join(tmpdir(), 'conclave-redis-fault-'));
    const server = await RedisServer.start({ args: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] });
    let closed = false;
    return {
      kind,
      serverPort: server.port,
      urlFor: (proxyPort) => `redis://127.0.0.1:${proxyPort}`,
      killServer: () => server.kill(),
      restartServer: async () => {
        // restart() is kill-then-launch; after kill() it only launches.
        if (!server.running) await server.restart();
      },
      pauseServer: () => server.pause(),
      resumeServer: () => server.resume(),
      recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
      async close() {
        if (closed) return;
        closed = true;
        await server.kill();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  if (kind === 'mysql') {
    const server = await startMariadb();
    return {
      kind,
      serverPort: server.port,
      urlFor: (proxyPort) => `mysql://root@127.0.0.1:${proxyPort}/test`,
      killServer: () => server.kill(),
      restartServer: () => server.restart(),
      pauseServer: () => server.pause(),
      resumeServer: () => server.resume(),
      recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
      close: () => server.stop(),
    };
  }
  const sessionTimeoutMs = zookeeperSessionTimeoutMs(leaseMs);
  const server = await startZookeeperServer();
  return {
    kind,
    serverPort: server.port,
    urlFor: (proxyPort) => `zookeeper://127.0.0.1:${proxyPort}?sessionTimeoutMs=${sessionTimeoutMs}`,
    killServer: () => server.kill(),
    restartServer: () => server.start(),
    recoveryMarginMs: leaseMs + sessionTimeoutMs + RECOVERY_SLACK_MS,
    close: () => server.close(),
  };
}
