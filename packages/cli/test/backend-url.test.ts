import { isConclaveError } from '@conclave/core';
import { thrown } from '@conclave/test-harness';
import { parseZookeeperUrl } from '@conclave/zookeeper';
import { createBackend } from '../src/backend-url';

/** Backend URLs taken apart in-process (no server): ZooKeeper's parameters, the user info's edges. */

describe('ZooKeeper URL', () => {
  test('hosts, chroot, credentials (a raw @ in the password) and every known parameter', () => {
    expect(parseZookeeperUrl('zookeeper://app:p@ss%2Fw@h1:2181,h2:2182/app?sessionTimeoutMs=6000&requestTimeoutMs=2000&root=/el')).toEqual({
      connect: 'h1:2181,h2:2182/app',
      auth: 'app:p@ss/w',
      sessionTimeoutMs: 6000,
      requestTimeoutMs: 2000,
      root: '/el',
    });
  });

  test.each([
    ['zookeeper://h:2181?foo=1', /unknown parameter "foo" \(known: sessionTimeoutMs, requestTimeoutMs, root\)/],
    ['zookeeper://h:2181?sessionTimeoutMs=soon', /sessionTimeoutMs must be a positive whole number of ms, got "soon"/],
    ['zookeeper://h:2181?requestTimeoutMs=0', /requestTimeoutMs must be a positive whole number/],
    ['zookeeper://h:2181?root=/a&root=/b', /"root" given twice/],
    ['zookeeper://zksecret@h:2181', /credentials must be user:password/],
    ['zookeeper://admin:zksecret@', /no server given/],
    ['zookeeper://admin:zk/secret@h:2181', /must be percent-encoded/],
    ['zookeeper://admin:zk%ZZsecret@h:2181', /bad percent-encoding/],
  ])('%s is INVALID_URL before any I/O, saying why, without the password', (url, why) => {
    const err = thrown(() => createBackend(url));
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect(err.message).toMatch(why);
    expect(err.message).not.toMatch(/zksecret|secret@/);
  });
});

describe('the seen leaks', () => {
  test.each([
    ['zookeeper://admin:hunter2@'],
    ['redis://:hunter2@'],
    ['mysql://root:p@hunter2@host/db?table=x&frob=1'],
    ['redis://:hun%ZZter2@host'],
    [`migrate:dual?from=${encodeURIComponent('mysql://root:hunter2@h/db')}&to=nope%3A`],
  ])('%s: the error says INVALID_URL and never shows hunter2', (url) => {
    const err = thrown(() => createBackend(url));
    expect(isConclaveError(err, 'INVALID_URL')).toBe(true);
    expect(err.message).not.toMatch(/hunter2|ter2/);
  });
});
