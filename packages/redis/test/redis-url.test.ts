import { isConclaveError } from '@conclave/core';
import { RedisBackend, parseRedisUrlSettings } from '@conclave/redis';
import { thrown } from '@conclave/test-harness';
import { BackendPool, SHARED_URL, uniqueName, uniquePrefix } from './helpers';

/** Redis URLs are checked like MySQL's: unknown parameters refused, the database checked on the server. */

const pool = new BackendPool();
afterEach(() => pool.closeAll());

describe('Redis URL parameters', () => {
  test.each(['family=6', 'db=3', 'password=urlsecret', 'tokenclockfloor=false'])(
    'an unknown parameter (?%s) is INVALID_URL naming it, before any I/O, the password hidden',
    (query) => {
      const err = thrown(() => new RedisBackend({ url: `redis://:urlsecret@127.0.0.1:1/0?${query}` }));
      expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
      expect((err as Error).message).toContain(`unknown parameter "${query.split('=')[0]}"`);
      expect((err as Error).message).not.toContain('urlsecret');
    },
  );

  test('tokenClockFloor=false in the URL sets the option, and is not passed on to ioredis', () => {
    const settings = parseRedisUrlSettings('redis://h1:1,h2:2/2?tokenClockFloor=false');
    expect(settings).toEqual({ urls: ['redis://h1:1/2', 'redis://h2:2/2'], db: 2, tokenClockFloor: false });
    expect(thrown(() => parseRedisUrlSettings('redis://h:1?tokenClockFloor=maybe'))).toEqual(
      expect.objectContaining({ code: 'INVALID_URL', message: expect.stringContaining('tokenClockFloor must be true or false') }),
    );
  });

  test.each(['/x', '/-1', '/1.5', '/0x1', '/123456'])('a database path that is no index (%s) is INVALID_URL before any I/O', (path) => {
    expect(thrown(() => new RedisBackend({ url: `redis://127.0.0.1:1${path}` }))).toEqual(
      expect.objectContaining({ code: 'INVALID_URL', message: expect.stringContaining('database number') }),
    );
  });
});

describe('Redis URL database on a real server', () => {
  test('a database the server does not have (/99 of 16) fails the first call with INVALID_URL instead of running on database 0', async () => {
    const backend = pool.redis({ url: `${SHARED_URL}/99`, keyPrefix: uniquePrefix() });
    const err = await backend.getLeader(uniqueName('db')).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e,
    );
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect((err as Error).message).toMatch(/has no database 99/);
    // And it stays refused: no later call slips through to database 0.
    await expect(backend.campaign({ election: uniqueName('db'), candidateId: 'c', leaseMs: 1000 })).rejects.toThrow(/has no database 99/);
  });

  test('redisOptions.db the server does not have fails the first call with INVALID_OPTIONS', async () => {
    const backend = pool.redis({ redisOptions: { host: new URL(SHARED_URL).hostname, port: Number(new URL(SHARED_URL).port || 6379), db: 99 }, keyPrefix: uniquePrefix() });
    await expect(backend.getLeader(uniqueName('db'))).rejects.toEqual(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('redisOptions.db 99') }),
    );
  });

  test('a database the server has (/3) works', async () => {
    const backend = pool.redis({ url: `${SHARED_URL}/3`, keyPrefix: uniquePrefix() });
    await expect(backend.getLeader(uniqueName('db'))).resolves.toBeNull();
  });
});
