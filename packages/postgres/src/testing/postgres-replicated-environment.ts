import { Client } from 'pg';
import { RECOVERY_SLACK_MS, replicatedServerEnvironment, type FailoverKind, type ReplicatedEnvironment } from '@conclave/test-harness/tools';
import { startPostgres, type PostgresServer } from './postgres-server';

/**
 * The failover kinds staged. Not `cut-off`: an old primary that stays writable for the clients
 * still connected to it keeps its leader renewing there, which no fence on the new primary can
 * stop (README, "Replicas and failover").
 */
const FAILOVER_KINDS: readonly FailoverKind[] = ['kill', 'kill-lagging', 'graceful'];

/** Longest wait for a promotion, s (pg_promote's own bound). */
const PROMOTE_WAIT_S = 60;

/** How long a failover may take on a loaded machine, beyond its leases (catch-up, promotion, the endpoint's move), ms. */
const FAILOVER_ALLOWANCE_MS = 2000;

/**
 * The replicated environment, with one more member than the harness needs: `standbyReady`
 * resolves once the standby of the current primary streams (after a failover it is rebuilt in the
 * background), so a test can time what it does during a failover from the failover's start.
 */
export interface PostgresReplicatedEnvironment extends ReplicatedEnvironment {
  standbyReady(): Promise<void>;
}

/**
 * The `replicated` topology (see `replicatedServerEnvironment`): a private primary and an
 * asynchronous streaming standby, a fresh base backup of its primary. A failover promotes the
 * standby (`pg_promote`).
 */
export async function startPostgresReplicatedEnvironment(leaseMs: number): Promise<PostgresReplicatedEnvironment> {
  const env = await replicatedServerEnvironment<PostgresServer>({
    store: 'PostgreSQL',
    failoverKinds: FAILOVER_KINDS,
    label: 'postgres endpoint (primary)',
    urlFor: (port) => `postgres://root@127.0.0.1:${port}/test`,
    // After the switch: at most one lease for the old leader's lease (or the fence that stands
    // for it on the new primary), one more for a follower's look again, and the slack.
    recoveryMarginMs: 2 * leaseMs + FAILOVER_ALLOWANCE_MS + RECOVERY_SLACK_MS,
    startPrimary: () => startPostgres(),
    async startReplica(_primary, linkPort) {
      const replica = await startPostgres({ standbyOf: linkPort });
      try {
        await streaming(replica);
      } catch (err) {
        await replica.stop();
        throw err;
      }
      return replica;
    },
    async stopPrimary(kind, { primary: old, link, replica }) {
      if (kind === 'kill') {
        await caughtUp(old, replica);
        await old.kill();
      } else if (kind === 'kill-lagging') {
        // The primary goes on granting and renewing for half a lease that the standby never sees.
        link.blackhole();
        await new Promise((r) => setTimeout(r, leaseMs / 2));
        await old.kill();
      } else {
        // A planned switch-over: no more writes on the old primary, the standby replays them all.
        await run(old, `ALTER SYSTEM SET default_transaction_read_only = on`);
        await run(old, `SELECT pg_reload_conf()`);
        await caughtUp(old, replica);
      }
    },
    promote: (replica) => run(replica, `SELECT pg_promote(true, ${PROMOTE_WAIT_S})`),
  });
  return { ...env, standbyReady: env.replicaReady };
}

/** Resolves once the standby streams from its primary (a failover's catch-up then takes a round trip, not a reconnection). */
async function streaming(replica: PostgresServer): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if ((await rows(replica, `SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'`)).length > 0) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`the standby on port ${replica.port} did not stream from its primary within 30 s`);
}

/** Resolves once the standby has replayed everything the primary had written when this was called. */
async function caughtUp(primary: PostgresServer, replica: PostgresServer): Promise<void> {
  const [row] = await rows(primary, `SELECT pg_current_wal_lsn()::text AS lsn`);
  const lsn = String(row!.lsn);
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const [r] = await rows(replica, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`);
    if (r!.done === true) return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`the standby on port ${replica.port} did not replay up to ${lsn} within 30 s`);
}

async function run(server: PostgresServer, sql: string): Promise<void> {
  await rows(server, sql);
}

async function rows(server: PostgresServer, sql: string): Promise<Array<Record<string, unknown>>> {
  const client = new Client({ connectionString: server.uri, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end().catch(() => undefined);
  }
}
