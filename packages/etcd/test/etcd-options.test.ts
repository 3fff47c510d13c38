import { expect, test } from '@jest/globals';
import { EtcdBackend } from '@conclave/etcd';

/** EtcdBackend options are checked in the constructor, before any I/O: no server needed. */

test('an unknown option key throws INVALID_OPTIONS from the constructor, naming it and the close known one', () => {
  expect(() => new EtcdBackend({ hosts: ['127.0.0.1:1'], requestTimeout: 1000 } as never)).toThrow(
    expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"requestTimeout".*did you mean requestTimeoutMs\?/) }),
  );
  expect(() => new EtcdBackend({ hosts: ['127.0.0.1:1'], foo: 1 } as never)).toThrow(
    expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.not.stringContaining('did you mean') }),
  );
});
