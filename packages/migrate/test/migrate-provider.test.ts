import { createBackend, memoryProvider, type BackendProvider } from '@conclave/core';
import { MigratingBackend, migrateProvider } from '@conclave/migrate';
import { thrown } from '@conclave/test-harness';

/** migrate: URLs build their two sides with the providers they are given. No server needed. */

const enc = encodeURIComponent;

describe('migrateProvider', () => {
  test('builds both sides with the providers createBackend was given', async () => {
    const backend = createBackend(`migrate:dual?from=${enc('memory:')}&to=${enc('memory:')}`, [memoryProvider, migrateProvider]);
    expect(backend).toBeInstanceOf(MigratingBackend);
    await backend.close();
  });

  test('a side whose scheme no given provider serves is INVALID_URL, and the side built is closed', async () => {
    let closed = 0;
    const counting: BackendProvider = {
      kind: 'memory',
      schemes: ['memory'],
      fromUrl(url, context) {
        const backend = memoryProvider.fromUrl(url, context);
        const close = backend.close.bind(backend);
        backend.close = () => {
          closed++;
          return close();
        };
        return backend;
      },
    };
    expect(thrown(() => createBackend(`migrate:dual?from=${enc('memory:')}&to=${enc('redis://h')}`, [counting, migrateProvider]))).toMatchObject({ code: 'INVALID_URL' });
    expect(closed).toBe(1);
  });

  test('a nested migration is INVALID_URL; called without createBackend\'s providers it is INVALID_OPTIONS', () => {
    const inner = `migrate:dual?from=${enc('memory:')}&to=${enc('memory:')}`;
    expect(thrown(() => createBackend(`migrate:dual?from=${enc(inner)}&to=${enc('memory:')}`, [memoryProvider, migrateProvider]))).toMatchObject({ code: 'INVALID_URL' });
    expect(thrown(() => migrateProvider.fromUrl(inner))).toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
