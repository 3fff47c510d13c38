import { performance } from 'node:perf_hooks';
import { Elector, type Logger } from '@conclave/core';
import { RedisServer } from '@conclave/redis/testing';
import { adminCall } from '../src/testing/redis-admin';
import { BackendPool, pastRestartFence, uniqueName, uniquePrefix, waitFor } from './helpers';

/**
 * A write that grants or keeps a lease counts once the master's replicas acknowledge it (WAIT):
 * a master whose replica is gone confirms nobody, so a deposed master (graceful failover, cut off
 * from Sentinel) cannot keep its leader while a promoted replica elects another. Private master
 * and replica, one lease of 1.5 s.
 */
const LEASE_MS = 1500;
const pool = new BackendPool();
let master: RedisServer | null = null;
let replica: RedisServer | null = null;
afterEach(async () => {
  await pool.closeAll();
  await Promise.all([master?.kill(), replica?.kill()]);
  master = replica = null;
});

async function startReplica(masterPort: number, port?: number): Promise<RedisServer> {
  const server = await RedisServer.start({ ...(port ? { port } : {}), args: ['--repl-diskless-load', 'swapdb', '--replicaof', '127.0.0.1', String(masterPort)] });
  // Synced: the master counts it online and it acknowledges the master's writes.
  await waitFor(async () => Number(await adminCall(masterPort, 'WAIT', '1', '200')) >= 1, 15_000, 'the replica to sync');
  return server;
}

/** A logger keeping the warnings' messages (with their error's message). */
function recordingLogger(into: string[]): Logger {
  const note = (context: object, message: string) => {
    const err = (context as { err?: { message?: string } }).err;
    into.push(`${message}${err?.message ? `: ${err.message}` : ''}`);
  };
  return { debug: () => undefined, info: () => undefined, warn: note, error: note };
}

describe('replica acknowledgement (minReplicas)', () => {
  test("'auto' with one replica: once the replica is gone, renewals are refused naming the replicas, the leader steps down by its deadline; with the replica back, a leader again", async () => {
    master = await RedisServer.start({ args: ['--repl-diskless-sync-delay', '0'] });
    replica = await startReplica(master.port);
    await pastRestartFence([master.url], LEASE_MS);
    const warnings: string[] = [];
    const backend = pool.redis({ url: master.url, keyPrefix: uniquePrefix() });
    const elector = new Elector({ backend, election: uniqueName('ack'), candidateId: 'a', leaseMs: LEASE_MS, logger: recordingLogger(warnings) });
    try {
      await elector.start();
      await waitFor(() => elector.isLeader(), 10_000, 'a to lead');
      const replicaPort = replica.port;
      // The replica dies: the master reports none connected, but the bar read while it was there
      // stays (a master that lost its replicas must not lower its own bar).
      await replica.kill();
      const lostAt = performance.now();
      await waitFor(() => !elector.isLeader(), 2 * LEASE_MS, 'a to step down');
      // By its deadline: at most a lease after the last acknowledged renewal, before the loss.
      expect(performance.now() - lostAt).toBeLessThan(LEASE_MS + 500);
      await waitFor(() => warnings.some((w) => /0 of 1 replicas acknowledged/.test(w)), LEASE_MS, 'a warning naming the replicas');
      // Nobody leads while the replica is away: its campaigns, which take the lease, are refused
      // too (the core logs the 1st, 2nd, 4th, 8th… failure in a row).
      await waitFor(() => warnings.some((w) => /campaign failed: .*0 of 1 replicas acknowledged the new term/.test(w)), 4 * LEASE_MS, 'a refused campaign');
      // Not ok once the backend has given no usable answer for a lease (the core's rule).
      await waitFor(() => !elector.health().ok, 3 * LEASE_MS, 'health to say so');
      // The replica back (empty, on its port): leadership again.
      expect(elector.isLeader()).toBe(false);
      replica = await startReplica(master.port, replicaPort);
      await waitFor(() => elector.isLeader(), 3 * LEASE_MS + 2000, 'a to lead again');
    } finally {
      await elector.stop();
    }
  }, 40_000);

  test('minReplicas 0 sends no WAIT: a master without replicas leads as before', async () => {
    master = await RedisServer.start();
    await pastRestartFence([master.url], LEASE_MS);
    const backend = pool.redis({ url: master.url, keyPrefix: uniquePrefix(), minReplicas: 0 });
    const election = uniqueName('ack0');
    const result = await backend.campaign({ election, candidateId: 'a', leaseMs: LEASE_MS });
    expect(result.role).toBe('leader');
    expect(String(await adminCall(master.port, 'INFO', 'commandstats'))).not.toMatch(/cmdstat_wait:/);
  }, 20_000);

  test('a fixed minReplicas above the replicas there are refuses new terms, naming the count', async () => {
    master = await RedisServer.start();
    await pastRestartFence([master.url], LEASE_MS);
    const backend = pool.redis({ url: `${master.url}?minReplicas=1`, keyPrefix: uniquePrefix() });
    await expect(backend.campaign({ election: uniqueName('ack1'), candidateId: 'a', leaseMs: LEASE_MS })).rejects.toEqual(
      expect.objectContaining({ code: 'BACKEND_UNAVAILABLE', message: expect.stringContaining('0 of 1 replicas acknowledged the new term') }),
    );
  }, 20_000);
});
