import { isConclaveError } from '@conclave/core';
import { ZookeeperBackend } from '@conclave/zookeeper';

/** Credentials belong in `auth`; a connect string holding them is refused without quoting them. No server needed. */

test.each(['admin:zksecret@h:2181', 'admin:zksecret@', ':zksecret@h1:2181,h2:2181/app', 'zk:se@cret@h:2181'])(
  'connect %p is INVALID_URL pointing to `auth`, and the message hides the password',
  (connect) => {
    let thrown: unknown;
    try {
      new ZookeeperBackend({ connect });
    } catch (err) {
      thrown = err;
    }
    expect(isConclaveError(thrown, 'INVALID_URL')).toBe(true);
    expect((thrown as Error).message).toMatch(/credentials go in `auth`/);
    expect((thrown as Error).message).not.toMatch(/zksecret|cret/);
  },
);
