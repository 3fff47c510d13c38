import { RECOVERY_SLACK_MS, replicatedServerEnvironment, type FailoverKind, type ReplicatedEnvironment } from '@conclave/test-harness/tools';
import { startMariadb, type MariadbServer } from './mysql-server';
import { promote, startReplicating, waitCaughtUp } from './mysql-replication';

/** The longest wait for a replica to apply what its primary logged, ms (the tables are tiny). */
const CATCH_UP_MS = 15_000;

/**
 * The kinds staged: not `cut-off`, under which no fence can help an asynchronous replica (the
 * old leader goes on renewing on the old primary; see the package README).
 */
const FAILOVER_KINDS: readonly FailoverKind[] = ['kill', 'kill-lagging', 'graceful'];

/**
 * The `replicated` topology (see `replicatedServerEnvironment`): a private MariaDB primary and an
 * asynchronous replica (GTID) that starts empty and replicates the primary's binary log from its
 * first event. A failover promotes the replica (`STOP SLAVE`, `RESET SLAVE ALL`).
 */
export async function startMysqlReplicatedEnvironment(leaseMs: number): Promise<ReplicatedEnvironment> {
  let nextServerId = 1;
  const launch = (createTestDatabase: boolean) => startMariadb({ replicationServerId: nextServerId++, createTestDatabase });
  return replicatedServerEnvironment<MariadbServer>({
    store: 'MySQL',
    failoverKinds: FAILOVER_KINDS,
    label: 'primary (behind the endpoint)',
    urlFor: (port) => `mysql://root@127.0.0.1:${port}/test`,
    // The failover itself (the longest: half a lease of stalled replication, then kill and
    // promote), then up to one lease of the fence from the first write on the new primary, and
    // the followers' backoff: see the package README.
    recoveryMarginMs: leaseMs / 2 + 2 * leaseMs + RECOVERY_SLACK_MS,
    startPrimary: () => launch(true),
    async startReplica(primary, linkPort) {
      const server = await launch(false);
      try {
        await startReplicating(server.port, linkPort);
        await waitCaughtUp(primary.port, server.port, CATCH_UP_MS);
      } catch (err) {
        await server.stop();
        throw err;
      }
      return server;
    },
    async stopPrimary(kind, { primary: old, link, replica }, endpoint) {
      if (kind === 'kill') {
        // Writes in flight stop at the endpoint, so the replica has every write when it dies.
        endpoint.blackhole();
        await waitCaughtUp(old.port, replica.port, CATCH_UP_MS);
        await old.kill();
      } else if (kind === 'kill-lagging') {
        // The replica stops receiving; the primary goes on granting and renewing for half a lease.
        link.blackhole();
        await new Promise((resolve) => setTimeout(resolve, leaseMs / 2));
        await old.kill();
        // What the stalled link still held is lost with the primary.
        link.cut();
      } else {
        // A planned switch-over: writes stop at the endpoint, the replica catches up, the old
        // primary shuts down cleanly.
        endpoint.cut();
        await waitCaughtUp(old.port, replica.port, CATCH_UP_MS);
        await old.stop();
      }
    },
    promote: (replica) => promote(replica.port),
  });
}
