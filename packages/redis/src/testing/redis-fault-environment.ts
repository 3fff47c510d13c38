import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RECOVERY_SLACK_MS, type FaultEnvironmentCore, type FaultServer, type FaultTopology } from '@conclave/test-harness/tools';
import { RedisServer } from './redis-server';
import { startRedisSentinelEnvironment } from './redis-sentinel-environment';

function redisServer(index: number, server: RedisServer): FaultServer {
  return {
    index,
    port: server.port,
    kill: () => server.kill(),
    // restart() is kill-then-launch; after kill() it only launches.
    restart: async () => {
      if (!server.running) await server.restart();
    },
    pause: () => server.pause(),
    resume: () => server.resume(),
  };
}

/**
 * The private Redis servers of a fault run.
 * - `single` and `duplicate-id`: one master with AOF `appendfsync always`, as the Redis README
 *   asks for a token guarantee across crashes.
 * - `no-persistence`: one master with `--save "" --appendonly no`; a restart comes back empty.
 * - `quorum`: three such masters (Redlock, `redis://h1,h2,h3`).
 * - `sentinel`: a master, a replica and Sentinel (see `startRedisSentinelEnvironment`).
 */
export async function startRedisFaultEnvironment(leaseMs: number, topology: FaultTopology): Promise<FaultEnvironmentCore> {
  if (topology === 'sentinel') return startRedisSentinelEnvironment(leaseMs);
  if (topology === 'no-persistence' || topology === 'quorum') {
    // RedisServer's defaults: `--save "" --appendonly no`; a restart comes back empty.
    const count = topology === 'quorum' ? 3 : 1;
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < count; i++) servers.push(await RedisServer.start());
    } catch (err) {
      await Promise.all(servers.map((s) => s.kill()));
      throw err;
    }
    let closed = false;
    return {
      servers: servers.map((s, i) => redisServer(i, s)),
      urlFor: (ports) => `redis://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
      restartLosesState: true,
      // A master that restarted empty grants no new term for one lease (the restart fence).
      recoveryMarginMs: 2 * leaseMs + RECOVERY_SLACK_MS,
      async close() {
        if (closed) return;
        closed = true;
        await Promise.all(servers.map((s) => s.kill()));
      },
    };
  }
  // AOF with fsync on every write, as the Redis README asks for a token guarantee across
  // crashes: a restarted server keeps the lease (with its absolute expiry) and the term counter.
  const dir = await mkdtemp(join(tmpdir(), 'conclave-redis-fault-'));
  const server = await RedisServer.start({ args: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] });
  let closed = false;
  return {
    servers: [redisServer(0, server)],
    urlFor: (ports) => `redis://127.0.0.1:${ports[0]}`,
    restartLosesState: false,
    recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
    async close() {
      if (closed) return;
      closed = true;
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
