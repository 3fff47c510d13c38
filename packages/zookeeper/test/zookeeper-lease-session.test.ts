import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { Elector } from '@conclave/core';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { waitFor } from '../../../test-harness/src/wait-for';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool, REQUEST_TIMEOUT_MS } from './zookeeper-fixtures';

// Without a sessionTimeoutMs option, `leaseMs` means on ZooKeeper what it means elsewhere: how
// long after a leader's last contact another candidate may take over. The server expires a
// session on the first tick boundary after its timeout, so the bound is lease + one tick.
const TICK_MS = 100;
const LEASE = 2000;
/** Notification, campaign round trip and a busy machine's scheduling, ms. */
const SLACK_MS = 600;

let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);
const electors: Elector[] = [];
const run = randomBytes(3).toString('hex');
/** Process warnings given meanwhile (the backend's way to say a lease cannot be honoured). */
const warnings: Array<{ message: string; code: string | undefined }> = [];

beforeAll(async () => {
  server = await startZookeeperServer({ tickTimeMs: TICK_MS });
  jest.spyOn(process, 'emitWarning').mockImplementation(((message: string | Error, options?: { code?: string }) => {
    warnings.push({ message: String(message), code: options?.code });
  }) as typeof process.emitWarning);
}, 120_000);

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await pool.closeAll();
  warnings.length = 0;
});

afterAll(async () => {
  jest.restoreAllMocks();
  await server?.close();
});

/** A backend with no session option (the fixtures set one). */
const noSessionOption = { sessionTimeoutMs: undefined } as const;

function codes(): Array<string | undefined> {
  return warnings.map((w) => w.code);
}

describe('ZooKeeper: the session follows the lease', () => {
  test('without a session option, a silently cut leader is replaced within one lease (plus a tick) of its last contact', async () => {
    const election = `zk-lease-${run}-cut`;
    const { backend: cutBackend, proxy } = await pool.proxied(noSessionOption);
    const a = new Elector({ backend: cutBackend, election, candidateId: 'a', leaseMs: LEASE });
    const b = new Elector({ backend: pool.direct(noSessionOption), election, candidateId: 'b', leaseMs: LEASE });
    electors.push(a, b);
    await a.start();
    await waitFor(() => a.isLeader(), 'a to lead', 5000);
    await b.start();
    await waitFor(() => b.state.leaderId === 'a', 'b to follow a', 5000);

    const bElected = new Promise<number>((resolve) => {
      const sub = b.elected$.subscribe(() => {
        sub.unsubscribe();
        resolve(performance.now());
      });
    });
    // Nothing reaches the server from `a` after this instant: its last contact is no later.
    const cutAt = performance.now();
    proxy.blackhole();
    const takeOverMs = (await bElected) - cutAt;
    proxy.resume();

    expect(a.isLeader()).toBe(false);
    expect(takeOverMs).toBeLessThanOrEqual(LEASE + TICK_MS + SLACK_MS);
    expect(codes()).toEqual([]);
  }, 30_000);

  test('a session opened for reads before the first campaign is replaced by one as long as the lease', async () => {
    const election = `zk-lease-${run}-reads`;
    const backend = pool.direct(noSessionOption);
    expect(await backend.getLeader(election)).toBeNull();
        // The read-only default (15 s, or the server's maxSessionTimeout if lower).
    expect(backend.staleLeaderMs).toBeGreaterThan(LEASE);

    const result = await backend.campaign({ election, candidateId: 'a 1', leaseMs: LEASE });
    expect(result.role).toBe('leader');
    expect(backend.staleLeaderMs).toBe(LEASE);
    expect(await backend.getLeader(election)).toMatchObject({ candidateId: 'a' });
    expect(codes()).toEqual([]);
  }, 30_000);

  test('a lease shorter than a session timeout set by hand is warned about once, naming the election', async () => {
    const election = `zk-lease-${run}-short`;
    const backend = pool.direct({ sessionTimeoutMs: 3000 });
    await backend.campaign({ election, candidateId: 'a 1', leaseMs: 1500 });
    await backend.campaign({ election, candidateId: 'a 1', leaseMs: 1500 });
    expect(codes()).toEqual(['CONCLAVE_ZOOKEEPER_SESSION_LONGER_THAN_LEASE']);
    expect(warnings[0]!.message).toContain(`election "${election}"`);
    expect(warnings[0]!.message).toContain('3000 ms');
  }, 30_000);

  test('a session the server grants longer than asked (its minSessionTimeout) is warned about', async () => {
    const election = `zk-lease-${run}-clamped`;
    // The server's smallest session is two ticks; ask for less.
    const backend = new ZookeeperBackend({ connect: server!.connect, requestTimeoutMs: REQUEST_TIMEOUT_MS });
    try {
      await backend.campaign({ election, candidateId: 'a 1', leaseMs: TICK_MS });
      expect(backend.staleLeaderMs).toBe(2 * TICK_MS);
      expect(codes()).toEqual(['CONCLAVE_ZOOKEEPER_SESSION_CLAMPED']);
      expect(warnings[0]!.message).toContain(`${2 * TICK_MS} ms session where ${TICK_MS} ms was asked`);
    } finally {
      await backend.close();
    }
  }, 30_000);
});
