import { isConclaveError } from '@conclave/core';
import { MysqlBackend, mysql2SslOption, parseMysqlUri } from '@conclave/mysql';
import { thrown } from '@conclave/test-harness';
import { uniqueElection, uniqueTable, uriFor } from './mysql-test-env';

/** MySQL URI parameters: TLS mapped onto mysql2's `ssl` option, everything unknown refused. No server needed. */

const BASE = 'mysql://app:tlssecret@db.example:3306/test';

describe('MySQL URI TLS parameters', () => {
  test('no ssl parameter: plain TCP (no tls settings)', () => {
    expect(parseMysqlUri(BASE).tls).toBeUndefined();
    expect(parseMysqlUri(`${BASE}?ssl=false`).tls).toBeUndefined();
  });

  test('ssl=true checks the server certificate with Node\'s CAs: mysql2 gets { rejectUnauthorized: true }', () => {
    const tls = parseMysqlUri(`${BASE}?ssl=true`).tls!;
    expect(mysql2SslOption(tls, () => 'unused')).toEqual({ rejectUnauthorized: true });
  });

  test('sslCa, sslCert, sslKey are read from their files into mysql2\'s ca, cert and key; sslRejectUnauthorized=false passes through', () => {
    const uri = `${BASE}?sslCa=${encodeURIComponent('/etc/ca.pem')}&sslCert=/c.pem&sslKey=/k.pem&sslRejectUnauthorized=false`;
    const tls = parseMysqlUri(uri).tls!;
    expect(tls).toEqual({ caPath: '/etc/ca.pem', certPath: '/c.pem', keyPath: '/k.pem', rejectUnauthorized: false });
    const read: string[] = [];
    const option = mysql2SslOption(tls, (path) => {
      read.push(path);
      return `PEM of ${path}`;
    });
    expect(option).toEqual({ ca: 'PEM of /etc/ca.pem', cert: 'PEM of /c.pem', key: 'PEM of /k.pem', rejectUnauthorized: false });
    expect(read).toEqual(['/etc/ca.pem', '/c.pem', '/k.pem']);
  });

  test('ssl=true reaches mysql2: the local server, which has no TLS, is refused as insecure rather than used in the clear', async () => {
    await using backend = new MysqlBackend({ uri: `${uriFor(uniqueTable('tls'))}&ssl=true` });
    await expect(backend.getLeader(uniqueElection('tls'))).rejects.toThrow(/does not support secure connection/);
  });

  test('an unreadable sslCa file is INVALID_URL naming the parameter and the path', () => {
    const tls = parseMysqlUri(`${BASE}?sslCa=/no/such/ca.pem`).tls!;
    const err = thrown(() => mysql2SslOption(tls));
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect((err as Error).message).toMatch(/sslCa file "\/no\/such\/ca.pem" \(ENOENT\)/);
  });

  test.each([
    ['ssl=yes', /ssl must be true or false, got "yes"/],
    ['sslRejectUnauthorized=0', /sslRejectUnauthorized must be true or false/],
    ['ssl=false&sslCa=/ca.pem', /ssl=false contradicts/],
    ['sslCert=/c.pem', /sslCert and sslKey go together/],
    ['sslCa=', /sslCa must be the path of a PEM file/],
    ['sslMode=required', /unknown MySQL URI parameter "sslMode"/],
  ])('?%s is refused with INVALID_URL before any I/O, the password hidden', (query, message) => {
    const err = thrown(() => new MysqlBackend({ uri: `${BASE}?${query}` }));
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('tlssecret');
  });
});
