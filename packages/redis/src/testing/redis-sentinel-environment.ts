import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FAILOVER_KINDS, RECOVERY_SLACK_MS, type FailoverKind, type FailoverRecord, type FaultEnvironmentCore } from '@conclave/test-harness/tools';
import { adminCall, adminSession, infoField, pollUntil, sentinelRecord } from './redis-admin';
import { RedisServer } from './redis-server';
import { SentinelServer } from './redis-sentinel-server';

/** The name Sentinel monitors the master under, as candidates ask for it. */
export const SENTINEL_MASTER_NAME = 'm';
/** How long Sentinel waits before it judges a silent master down, ms. */
export const SENTINEL_DOWN_AFTER_MS = 1000;
/** Sentinel's failover-timeout, ms; it fails the same master over again only twice this after the last start. */
export const SENTINEL_FAILOVER_TIMEOUT_MS = 3000;
/** Sentinel's own work after it judged the master down: electing itself, promoting, seeing the promotion (its INFO once a second). */
const SENTINEL_PROMOTION_MS = 2000;
/**
 * Sentinel and the replicas log in as users of their own, so a failover can cut a master off from
 * them alone (candidates use the default user): `ACL SETUSER <user> off` refuses their logins,
 * `CLIENT KILL USER <user>` drops the connections they have. A connection whose login failed goes
 * on as the default user, so cutting Sentinel off also takes PING from that user: Sentinel counts
 * a master down when PING gets no valid reply (candidates never send it).
 */
const SENTINEL_USER = { user: 'sentinel', password: 'sentinel-secret' };
const REPLICATION_USER = { user: 'replication', password: 'replication-secret' };
/**
 * A replica's first copy starts at once (the default waits 5 s for more replicas to share it), and
 * is loaded from the socket rather than through a file in the working directory.
 */
const SERVER_ARGS = [
  '--repl-diskless-sync-delay', '0',
  '--repl-diskless-load', 'swapdb',
  ...['--user', SENTINEL_USER.user, 'on', `>${SENTINEL_USER.password}`, '~*', '&*', '+@all'],
  ...['--user', REPLICATION_USER.user, 'on', `>${REPLICATION_USER.password}`, '+@all'],
  ...['--masteruser', REPLICATION_USER.user, '--masterauth', REPLICATION_USER.password],
];
/** Longest wait for a switch, or for a replica to be back and known to Sentinel, ms. */
const WAIT_MS = 60_000;

/**
 * The `sentinel` topology: a master, one replica and one Sentinel, all private. Candidates reach
 * Sentinel through their own proxy (server 0 of the environment is Sentinel) and the master at the
 * address Sentinel gives. `failover(kind)`:
 * - `kill`: once the replica has acknowledged every write (`WAIT`), the master is SIGKILLed.
 * - `kill-lagging`: the master stops serving its replica (the replication user is turned off and
 *   its link dropped), takes writes for half a lease, then is SIGKILLed: the promoted replica
 *   misses what it took meanwhile.
 * - `graceful`: `SENTINEL FAILOVER`; Sentinel turns the old master into a replica itself (when its
 *   next look finds it still a master, up to ten seconds later), and it stays writable until then.
 * - `cut-off`: the old master keeps running and writable for candidates, but Sentinel and the
 *   replica can no longer reach it (their users turned off, their links dropped): Sentinel judges
 *   it down and promotes the replica, while the candidates connected to it stay, and a candidate
 *   that starts meanwhile may still be sent to it. It stays so for two leases after the switch,
 *   then is replaced.
 * A killed or cut-off master comes back empty on its port as the new master's replica; the next
 * `failover()` waits until the replica has caught up, Sentinel knows it, and Sentinel may fail the
 * master over again.
 */
export async function startRedisSentinelEnvironment(leaseMs: number): Promise<FaultEnvironmentCore> {
  const dir = await mkdtemp(join(tmpdir(), 'conclave-redis-sentinel-'));
  const started: Array<{ kill(): Promise<void> }> = [];
  try {
    const master = await RedisServer.start({ args: SERVER_ARGS });
    started.push(master);
    const replica = await RedisServer.start({ args: [...SERVER_ARGS, '--replicaof', '127.0.0.1', String(master.port)] });
    started.push(replica);
    await pollUntil(() => caughtUp(master.port, replica.port), WAIT_MS, 'the replica to sync');
    const sentinel = await SentinelServer.start({
      dir,
      masterName: SENTINEL_MASTER_NAME,
      masterPort: master.port,
      downAfterMs: SENTINEL_DOWN_AFTER_MS,
      failoverTimeoutMs: SENTINEL_FAILOVER_TIMEOUT_MS,
      auth: SENTINEL_USER,
    });
    started.push(sentinel);
    const pair = new SentinelPair(sentinel, master, replica, leaseMs, dir);
    await pollUntil(() => pair.readyForFailover(), WAIT_MS, 'Sentinel to know the replica');
    return pair.environment();
  } catch (err) {
    await Promise.all(started.map((s) => s.kill()));
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Whether the replica on `replicaPort` follows the master on `masterPort` and has acknowledged its every write. */
async function caughtUp(masterPort: number, replicaPort: number): Promise<boolean> {
  if ((await infoField(replicaPort, 'replication', 'master_port')) !== String(masterPort)) return false;
  if ((await infoField(replicaPort, 'replication', 'master_link_status')) !== 'up') return false;
  return Number(await adminCall(masterPort, 'WAIT', '1', '500')) >= 1;
}

/**
 * Cuts a master off from its replica (and, with `sentinelToo`, from Sentinel): their users are
 * turned off and their connections dropped (see SENTINEL_USER). Candidates, on the default user,
 * can still connect and write.
 */
async function cutOff(port: number, sentinelToo: boolean): Promise<void> {
  const users = sentinelToo ? [REPLICATION_USER.user, SENTINEL_USER.user] : [REPLICATION_USER.user];
  await adminSession(port, async (call) => {
    if (sentinelToo) await call('ACL', 'SETUSER', 'default', '-ping');
    for (const user of users) {
      await call('ACL', 'SETUSER', user, 'off');
      await call('CLIENT', 'KILL', 'USER', user);
    }
  });
}

class SentinelPair {
  private restoring: Promise<void> = Promise.resolve();
  private lastFailoverAt = -Infinity;
  private closed = false;
  /** Servers replaced by a failover but not yet stopped (a cut-off master left running). */
  private readonly retired = new Set<RedisServer>();

  constructor(
    private readonly sentinel: SentinelServer,
    private master: RedisServer,
    private replica: RedisServer | null,
    private readonly leaseMs: number,
    private readonly dir: string,
  ) {}

  environment(): FaultEnvironmentCore {
    const sentinel = this.sentinel;
    return {
      servers: [
        {
          index: 0,
          port: sentinel.port,
          label: 'redis sentinel',
          kill: () => sentinel.kill(),
          restart: async () => {
            if (!sentinel.running) await sentinel.restart();
          },
        },
      ],
      urlFor: (ports) => `redis+sentinel://127.0.0.1:${ports[0]!}/${SENTINEL_MASTER_NAME}`,
      restartLosesState: false,
      // Sentinel's detection and promotion, then the promoted master's restart fence (a lease from
      // when it is first seen) or the old leader's last lease, then a lease for a candidate to look.
      recoveryMarginMs: SENTINEL_DOWN_AFTER_MS + SENTINEL_PROMOTION_MS + 2 * this.leaseMs + RECOVERY_SLACK_MS,
      failover: (kind) => this.failover(kind),
      failoverKinds: FAILOVER_KINDS,
      close: () => this.close(),
    };
  }

  /** The replica is back, caught up and known to Sentinel as a healthy replica of the master, who is not failing over. */
  async readyForFailover(): Promise<boolean> {
    await this.followSentinelsChoice();
    const replica = this.replica;
    if (!replica || !(await caughtUp(this.master.port, replica.port))) return false;
    const master = sentinelRecord(await adminCall(this.sentinel.port, 'SENTINEL', 'MASTER', SENTINEL_MASTER_NAME));
    if (master.flags !== 'master' || master.port !== String(this.master.port)) return false;
    const replicas = (await adminCall(this.sentinel.port, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER_NAME)) as unknown[];
    return replicas.map(sentinelRecord).some((r) => r.port === String(replica.port) && r.flags === 'slave' && r['master-link-status'] === 'ok');
  }

  /**
   * Sentinel fails a master over on its own when it judges it down (a master slower to answer
   * than down-after on a loaded machine): the replica it promoted is the master from then on, and
   * the old master, which Sentinel turns into its replica, the replica.
   */
  private async followSentinelsChoice(): Promise<void> {
    const replica = this.replica;
    if (replica && (await this.sentinelMasterPort()) === replica.port) {
      this.replica = this.master;
      this.master = replica;
    }
  }

  private async failover(kind: FailoverKind): Promise<FailoverRecord> {
    await this.restoring;
    await pollUntil(() => this.readyForFailover(), WAIT_MS, 'a replica ready for the next failover').catch(async (err: Error) => {
      throw new Error(`${err.message}; ${await this.describe()}`);
    });
    // Sentinel fails the same master over again only twice its failover-timeout after the last start.
    const again = this.lastFailoverAt + 2 * SENTINEL_FAILOVER_TIMEOUT_MS + 250 - performance.now();
    if (again > 0) await delay(again);
    const old = this.master;
    const promoted = this.replica!;
    const startedAt = performance.now();
    switch (kind) {
      case 'kill':
        await pollUntil(() => caughtUp(old.port, promoted.port), WAIT_MS, 'the replica to catch up');
        await old.kill();
        break;
      case 'kill-lagging':
        await cutOff(old.port, false);
        await delay(this.leaseMs / 2);
        await old.kill();
        break;
      case 'graceful':
        await adminCall(this.sentinel.port, 'SENTINEL', 'FAILOVER', SENTINEL_MASTER_NAME);
        break;
      case 'cut-off':
        await cutOff(old.port, true);
        break;
    }
    await pollUntil(
      async () =>
        (await this.sentinelMasterPort()) === promoted.port && (await infoField(promoted.port, 'replication', 'role')) === 'master',
      WAIT_MS,
      `Sentinel to promote the replica (${kind})`,
    );
    const switchMs = Math.round(performance.now() - startedAt);
    this.lastFailoverAt = startedAt;
    this.master = promoted;
    this.replica = null;
    this.restoring = this.restore(kind, old);
    this.restoring.catch(() => undefined);
    return { kind, primaryPort: promoted.port, switchMs };
  }

  /** Gives the new master a replica again: the old master, turned by Sentinel (graceful) or restarted empty on its port. */
  private async restore(kind: FailoverKind, old: RedisServer): Promise<void> {
    this.retired.add(old);
    if (kind === 'graceful') {
      await pollUntil(() => caughtUp(this.master.port, old.port), WAIT_MS, 'Sentinel to turn the old master into a replica', () => this.closed);
      this.retired.delete(old);
      this.replica = old;
      return;
    }
    // A cut-off master stays writable, with candidates still on it, for two leases.
    if (kind === 'cut-off') await delay(2 * this.leaseMs);
    await old.kill();
    this.retired.delete(old);
    if (this.closed) return;
    const fresh = await RedisServer.start({ port: old.port, args: [...SERVER_ARGS, '--replicaof', '127.0.0.1', String(this.master.port)] });
    if (this.closed) {
      await fresh.kill();
      return;
    }
    this.replica = fresh;
    await pollUntil(() => caughtUp(this.master.port, fresh.port), WAIT_MS, 'the restarted server to sync', () => this.closed);
  }

  /** What the servers and Sentinel say now, for the message of a failed wait. */
  private async describe(): Promise<string> {
    const safe = (p: Promise<unknown>) => p.then(String, (e: Error) => `(${e.message})`);
    const master = sentinelRecord(await adminCall(this.sentinel.port, 'SENTINEL', 'MASTER', SENTINEL_MASTER_NAME).catch(() => []));
    const replicas = ((await adminCall(this.sentinel.port, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER_NAME).catch(() => [])) as unknown[]).map(sentinelRecord);
    const replica = this.replica;
    return [
      `master ${this.master.port} (Sentinel: port ${master.port}, flags ${master.flags})`,
      `replica ${replica ? replica.port : 'none'}${replica ? ` (role ${await safe(infoField(replica.port, 'replication', 'role'))}, link ${await safe(infoField(replica.port, 'replication', 'master_link_status'))}, master port ${await safe(infoField(replica.port, 'replication', 'master_port'))})` : ''}`,
      `Sentinel's replicas: ${replicas.map((r) => `${r.port} ${r.flags} link ${r['master-link-status']}`).join(', ') || 'none'}`,
    ].join('; ');
  }

  private async sentinelMasterPort(): Promise<number | null> {
    const reply = await adminCall(this.sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME);
    return Array.isArray(reply) ? Number(reply[1]) : null;
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A restore under way sees `closed` at its next step; a server it starts after this kills itself.
    await Promise.all([this.sentinel.kill(), this.master.kill(), this.replica?.kill(), ...[...this.retired].map((s) => s.kill())]);
    await rm(this.dir, { recursive: true, force: true });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
