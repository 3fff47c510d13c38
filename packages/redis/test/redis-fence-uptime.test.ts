import Redis from 'ioredis';
import { RedisServer } from '@conclave/redis/testing';
import { BackendPool, uniqueName, uniquePrefix } from './helpers';

/**
 * The restart fence must hold a new term back for a whole lease after the server started, however
 * the start falls within a second: INFO's uptime is whole seconds of a truncated clock, and reads
 * 1 just after a second boundary, long before a second has passed. Starting the server late in a
 * second, and asking it first once its uptime reads 1, makes that reading come early: a fence that
 * trusted it would end up to a second short.
 */
const LEASE = 2000;
const pool = new BackendPool();
afterEach(() => pool.closeAll());

test('a fresh server grants no term until a whole lease after it started, even when it started late in a second', async () => {
  // Late in a second of the wall clock, which is the clock Redis's TIME and uptime read.
  while (Date.now() % 1000 < 850 || Date.now() % 1000 > 900) await new Promise((r) => setTimeout(r, 5));
  const spawnedAt = Date.now();
  const server = await RedisServer.start();
  try {
    const info = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      while (!/uptime_in_seconds:[1-9]/.test(await info.info('server'))) await new Promise((r) => setTimeout(r, 5));
    } finally {
      info.disconnect();
    }
    const backend = pool.redis({ url: server.url, keyPrefix: uniquePrefix(), commandTimeoutMs: 500 });
    const election = uniqueName('fence-uptime');
    let grantedAt: number | null = null;
    while (grantedAt === null && Date.now() - spawnedAt < 3 * LEASE) {
      const result = await backend.campaign({ election, candidateId: 'eager 1', leaseMs: LEASE }).catch(() => null);
      if (result?.role === 'leader') grantedAt = Date.now();
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(grantedAt).not.toBeNull();
    // The server started after spawnedAt, so a correct fence ends after spawnedAt + LEASE.
    expect(grantedAt! - spawnedAt).toBeGreaterThanOrEqual(LEASE);
  } finally {
    await server.stop();
  }
}, 30_000);
