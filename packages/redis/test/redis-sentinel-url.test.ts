import { createBackend, isConclaveError } from '@conclave/core';
import { RedisBackend, parseRedisSentinelUrl, parseRedisUrlSettings, redisProvider } from '@conclave/redis';
import { thrown } from '@conclave/test-harness';

/** `redis+sentinel://` URLs and `minReplicas`: checked before any I/O, the password never shown. */

describe('redis+sentinel:// URLs', () => {
  test('hosts are the sentinels (26379 by default), the path names the master and the database, the user info is the master’s', () => {
    const settings = parseRedisSentinelUrl('redis+sentinel://app:m%40ster@s1,s2:26380,[::1]:26381/mymaster/2?sentinelPassword=sp&sentinelUsername=su&minReplicas=1&tokenClockFloor=false');
    expect(settings).toEqual({
      db: 2,
      tokenClockFloor: false,
      minReplicas: 1,
      redisOptions: {
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26380 },
          { host: '::1', port: 26381 },
        ],
        name: 'mymaster',
        db: 2,
        username: 'app',
        password: 'm@ster',
        sentinelUsername: 'su',
        sentinelPassword: 'sp',
      },
    });
    expect(parseRedisSentinelUrl('REDIS+SENTINEL://:pw@h/m').redisOptions).toEqual({ sentinels: [{ host: 'h', port: 26379 }], name: 'm', password: 'pw' });
  });

  test.each([
    ['redis+sentinel://:secretpw@h:26379', 'must name the master'],
    ['redis+sentinel://:secretpw@h:26379/', 'must name the master'],
    ['redis+sentinel://:secretpw@h:26379/m/x', 'database number'],
    ['redis+sentinel://:secretpw@h:26379/m/1/2', 'database number'],
    ['redis+sentinel://:secretpw@/m', 'missing Sentinel host'],
    ['redis+sentinel://:secretpw@h,,g/m', 'empty Sentinel host'],
    ['redis+sentinel://:secretpw@h:99999/m', 'Sentinel host'],
    ['redis+sentinel://:secretpw@h/m?password=x', 'unknown parameter "password"'],
    ['redis+sentinel://:secretpw@h/m?minReplicas=-1', 'minReplicas must be auto or a whole number'],
    ['redis+sentinel://:secret%zzpw@h/m', 'percent-encoding'],
    ['redis+sentinel://:secret/pw@h/m', 'must be percent-encoded'],
    ['redis+sentinel://h/m?sentinelPassword=secretpw&x=1', 'unknown parameter "x"'],
    ['redis+sentinel://:secretpw@h/m#frag', 'fragment'],
  ])('%s is INVALID_URL (%s) before any I/O, the password hidden', (url, why) => {
    const err = thrown(() => new RedisBackend({ url }));
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect((err as Error).message).toContain(why);
    expect((err as Error).message).not.toContain('secret');
  });

  test('the provider serves redis+sentinel://, so `conclave … --backend redis+sentinel://…` reaches this parser', () => {
    // Candidate processes of the Sentinel fault tests build their backends from such URLs through
    // the provider; here, only that the scheme is routed here and checked before any I/O.
    expect(redisProvider.schemes).toContain('redis+sentinel');
    expect(thrown(() => createBackend('redis+sentinel://:secretpw@127.0.0.1:1', [redisProvider]))).toEqual(
      expect.objectContaining({ code: 'INVALID_URL', message: expect.stringMatching(/^invalid Redis Sentinel URL .*must name the master/) }),
    );
    expect(thrown(() => createBackend('redis+sentinel://:secretpw@127.0.0.1:1', [redisProvider])).message).not.toContain('secretpw');
  });
});

describe('minReplicas', () => {
  test("'auto' or a whole number ≥ 0, from the option or the URL (the option wins); anything else is INVALID_OPTIONS / INVALID_URL", () => {
    expect(parseRedisUrlSettings('redis://h:1?minReplicas=2').minReplicas).toBe(2);
    expect(parseRedisUrlSettings('redis://h:1?minReplicas=auto').minReplicas).toBe('auto');
    for (const bad of [-1, 1.5, '1', 'all', Number.NaN]) {
      const err = thrown(() => new RedisBackend({ url: 'redis://127.0.0.1:1', minReplicas: bad as never }));
      expect(err).toEqual(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('minReplicas') }));
    }
    expect(thrown(() => new RedisBackend({ url: 'redis://:secretpw@127.0.0.1:1?minReplicas=x' }))).toEqual(
      expect.objectContaining({ code: 'INVALID_URL', message: expect.not.stringContaining('secretpw') }),
    );
  });

  test('a quorum counts independent masters: a positive minReplicas is INVALID_OPTIONS, 0 and auto are accepted', async () => {
    expect(thrown(() => new RedisBackend({ url: 'redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3', minReplicas: 1 }))).toEqual(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('quorum') }),
    );
    expect(thrown(() => new RedisBackend({ url: 'redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?minReplicas=1' }))).toEqual(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    for (const minReplicas of [0, 'auto'] as const) {
      const backend = new RedisBackend({ url: 'redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3', minReplicas });
      await backend.close();
    }
  });
});
