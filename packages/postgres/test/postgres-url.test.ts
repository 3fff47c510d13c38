import { describe, expect, test } from '@jest/globals';
import { isConclaveError } from '@conclave/core';
import { PostgresBackend, parsePostgresUri, postgresProvider } from '@conclave/postgres';
import { thrown } from '@conclave/test-harness';

/** PostgreSQL URLs and options: parsed, or refused before any I/O with a stable code and no password shown. No server needed. */

const BASE = 'postgres://app:pgsecret@db.example:5433/app';

describe('PostgreSQL URLs', () => {
  test('user, password, host, port, database and the parameters are read; defaults otherwise', () => {
    expect(parsePostgresUri(`${BASE}?table=leases&schema=ops&connectionLimit=7&sslmode=verify-full`)).toEqual({
      host: 'db.example',
      port: 5433,
      user: 'app',
      password: 'pgsecret',
      database: 'app',
      connectionLimit: 7,
      table: 'leases',
      schema: 'ops',
      sslmode: 'verify-full',
    });
    expect(parsePostgresUri('postgresql://[::1]/test')).toEqual({ host: '::1', port: 5432, database: 'test', connectionLimit: 4, sslmode: 'disable' });
    expect(parsePostgresUri('postgres://u:p%40ss@h/db').password).toBe('p@ss');
  });

  test('the provider serves postgres: and postgresql:, whatever the case', () => {
    expect(postgresProvider.schemes).toEqual(['postgres', 'postgresql']);
    expect(postgresProvider.fromUrl('POSTGRES://root@127.0.0.1/test').kind).toBe('postgres');
  });

  test.each([
    ['postgres://db.example:5432/', 'INVALID_URL', /must name one database/],
    ['mysql://app:pgsecret@db.example/app', 'INVALID_URL', /must start with postgres:\/\/ or postgresql:\/\//],
    ['postgres://app:pg/secret@db.example/app', 'INVALID_URL', /must be percent-encoded/],
    ['postgres://app:pgsecret@db.example:99999/app', 'INVALID_URL', /cannot parse/],
    [`${BASE}?connectionLimit=0`, 'INVALID_URL', /connectionLimit must be a positive integer/],
    [`${BASE}?connectionLimit=2x`, 'INVALID_URL', /connectionLimit must be a positive integer/],
    [`${BASE}?sslmode=prefer`, 'INVALID_URL', /sslmode must be one of disable, require, verify-full/],
    [`${BASE}?application_name=x`, 'INVALID_URL', /unknown PostgreSQL URL parameter "application_name"/],
    [`${BASE}?table=Leases`, 'INVALID_NAME', /table must be a lowercase identifier/],
    [`${BASE}?table=x%22%3Bdrop`, 'INVALID_NAME', /table must be a lowercase identifier/],
    [`${BASE}?schema=1ops`, 'INVALID_NAME', /schema must be a lowercase identifier/],
    [`postgres://app:%E0%A4%A@db.example/app`, 'INVALID_URL', /bad percent-encoding/],
  ])('%s is refused with %s before any I/O, the password hidden', (uri, code, message) => {
    const err = thrown(() => new PostgresBackend({ uri }));
    expect(isConclaveError(err, code as 'INVALID_URL')).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('pgsecret');
    expect(JSON.stringify(err)).not.toContain('pgsecret');
  });

  test('bad options are INVALID_OPTIONS / INVALID_NAME from the constructor', () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'INVALID_OPTIONS'],
      [{}, 'INVALID_OPTIONS'],
      [{ uri: BASE, pool: {} }, 'INVALID_OPTIONS'],
      [{ pool: { query: () => undefined } }, 'INVALID_OPTIONS'],
      [{ uri: BASE, queryTimeoutMs: 0 }, 'INVALID_OPTIONS'],
      [{ uri: BASE, defaultLeaseMs: 1.5 }, 'INVALID_OPTIONS'],
      [{ uri: BASE, wakeUp: 'yes' }, 'INVALID_OPTIONS'],
      [{ uri: BASE, table: 'a'.repeat(64) }, 'INVALID_NAME'],
      [{ uri: BASE, schema: 'public.x' }, 'INVALID_NAME'],
    ];
    for (const [options, code] of cases) {
      const err = thrown(() => new PostgresBackend(options as never));
      expect([options, isConclaveError(err, code as 'INVALID_OPTIONS')]).toEqual([options, true]);
    }
  });

  test('an unknown option key throws INVALID_OPTIONS from the constructor, naming it and the close known one', () => {
    const err = thrown(() => new PostgresBackend({ uri: BASE, wakeup: false } as never));
    expect(isConclaveError(err, 'INVALID_OPTIONS')).toBe(true);
    expect(err.message).toMatch(/"wakeup".*did you mean wakeUp\?/);
    expect(err.message).not.toContain('pgsecret');
  });

  test('the changes part (watch and isWatching, best-effort) is there exactly with wakeUp', async () => {
    const on = new PostgresBackend({ uri: BASE });
    const off = new PostgresBackend({ uri: BASE, wakeUp: false });
    expect(on.changes).toMatchObject({ delivery: 'best-effort', leaseEnds: false });
    expect(typeof on.changes!.watch).toBe('function');
    expect(typeof on.changes!.isWatching).toBe('function');
    expect(off.changes).toBeUndefined();
    await Promise.all([on.close(), off.close()]);
  });
});
