import { RECOVERY_SLACK_MS, startTcpProxy, type FailoverKind, type FailoverRecord, type FaultEnvironmentCore, type TcpProxy } from '@conclave/test-harness/tools';
import { startMariadb, type MariadbServer } from './mysql-server';
import { promote, startReplicating, waitCaughtUp } from './mysql-replication';

/** A replica and the proxy its replication connection goes through (to stall it). */
interface Replica {
  server: MariadbServer;
  link: TcpProxy;
}

/** The longest wait for a replica to apply what its primary logged, ms (the tables are tiny). */
const CATCH_UP_MS = 15_000;

/**
 * The kinds staged: not `cut-off`, under which no fence can help an asynchronous replica (the
 * old leader goes on renewing on the old primary; see the package README).
 */
const FAILOVER_KINDS: readonly FailoverKind[] = ['kill', 'kill-lagging', 'graceful'];

/** The environment, and what a directed test waits for before it stages a failover. */
export interface MysqlReplicatedEnvironment extends FaultEnvironmentCore {
  /** Resolves once the current primary has a caught-up replica (what the next `failover` waits for). */
  replicaReady(): Promise<void>;
}

/**
 * The `replicated` topology: a private MariaDB primary and an asynchronous replica (GTID), the
 * replica's replication connection through a proxy (`kill-lagging` stalls it), and one endpoint
 * (a proxy, as a managed database's DNS name) that candidates reach and a failover moves to the
 * promoted replica. After each failover a new empty replica of the new primary is built in the
 * background; the next failover waits for it.
 */
export async function startMysqlReplicatedEnvironment(leaseMs: number): Promise<MysqlReplicatedEnvironment> {
  let nextServerId = 1;
  const started: MariadbServer[] = [];
  const proxies: TcpProxy[] = [];
  const launch = async (createTestDatabase: boolean) => {
    const server = await startMariadb({ replicationServerId: nextServerId++, createTestDatabase });
    started.push(server);
    return server;
  };
  const addReplica = async (primary: MariadbServer): Promise<Replica> => {
    const server = await launch(false);
    const link = await startTcpProxy({ targetPort: primary.port });
    proxies.push(link);
    await startReplicating(server.port, link.port);
    await waitCaughtUp(primary.port, server.port, CATCH_UP_MS);
    return { server, link };
  };

  let primary = await launch(true);
  const endpoint = await startTcpProxy({ targetPort: primary.port });
  proxies.push(endpoint);
  let replica: Promise<Replica>;
  try {
    replica = Promise.resolve(await addReplica(primary));
  } catch (err) {
    await Promise.all([...proxies.map((p) => p.close()), ...started.map((s) => s.stop())]);
    throw err;
  }

  const failover = async (kind: FailoverKind): Promise<FailoverRecord> => {
    if (!FAILOVER_KINDS.includes(kind)) throw new Error(`the replicated MySQL environment does not stage ${kind}`);
    const next = await replica;
    const old = primary;
    const startedAt = Date.now();
    if (kind === 'kill') {
      // Writes in flight stop at the endpoint, so the replica has every write when it dies.
      endpoint.blackhole();
      await waitCaughtUp(old.port, next.server.port, CATCH_UP_MS);
      await old.kill();
    } else if (kind === 'kill-lagging') {
      // The replica stops receiving; the primary goes on granting and renewing for half a lease.
      next.link.blackhole();
      await new Promise((resolve) => setTimeout(resolve, leaseMs / 2));
      await old.kill();
      // What the stalled link still held is lost with the primary.
      next.link.cut();
    } else {
      // A planned switch-over: writes stop at the endpoint, the replica catches up, the old
      // primary shuts down cleanly.
      endpoint.cut();
      await waitCaughtUp(old.port, next.server.port, CATCH_UP_MS);
      await old.stop();
    }
    await promote(next.server.port);
    endpoint.retarget(next.server.port);
    endpoint.resume();
    const switchMs = Date.now() - startedAt;
    primary = next.server;
    await Promise.all([next.link.close(), old.stop()]);
    replica = addReplica(primary);
    // A failed build is reported by the next failover (or close), not as an unhandled rejection.
    replica.catch(() => undefined);
    return { kind, primaryPort: primary.port, switchMs };
  };

  return {
    servers: [
      {
        index: 0,
        port: endpoint.port,
        label: 'primary (behind the endpoint)',
        kill: () => primary.kill(),
        restart: () => primary.restart(),
        pause: () => primary.pause(),
        resume: () => primary.resume(),
      },
    ],
    urlFor: (ports) => `mysql://root@127.0.0.1:${ports[0]}/test`,
    restartLosesState: false,
    // The failover itself (the longest: half a lease of stalled replication, then kill and
    // promote), then up to one lease of the fence from the first write on the new primary, and
    // the followers' backoff: see the package README.
    recoveryMarginMs: leaseMs / 2 + 2 * leaseMs + RECOVERY_SLACK_MS,
    failover,
    failoverKinds: FAILOVER_KINDS,
    replicaReady: async () => {
      await replica;
    },
    close: async () => {
      await replica.catch(() => undefined);
      await Promise.all(proxies.map((p) => p.close()));
      await Promise.all(started.map((s) => s.stop()));
    },
  };
}
