import { MemoryBackend, createBackend, memoryProvider } from '@conclave/core';
import { isBackendProvider, providerFor, providerUrl, type BackendProvider } from '@conclave/core/spi';
import { thrown } from '@conclave/test-harness';

/** The provider seam: URLs go to the provider of their scheme, checked before any I/O. No server needed. */

// A kind of its own, to show that a URL reaches its provider's fromUrl as written.
const seen: string[] = [];
const echoProvider: BackendProvider = {
  kind: 'echo',
  schemes: ['echo', 'echos'],
  fromUrl(url) {
    seen.push(providerUrl(echoProvider, url));
    return new MemoryBackend();
  },
};

describe('createBackend over providers', () => {
  beforeEach(() => {
    seen.length = 0;
  });

  test('a URL goes to the provider of its scheme, whatever the case, as written', async () => {
    const backend = createBackend('ECHOS://u:pw@h1:1,h2:2/x', [memoryProvider, echoProvider]);
    expect(backend.kind).toBe('memory');
    expect(seen).toEqual(['ECHOS://u:pw@h1:1,h2:2/x']);
    await backend.close();
    expect(createBackend('memory:', [memoryProvider]).kind).toBe('memory');
  });

  test('a URL object is read as its href', async () => {
    const backend = createBackend(new URL('echo://h:1/x?a=b'), [echoProvider]);
    expect(seen).toEqual(['echo://h:1/x?a=b']);
    await backend.close();
  });

  test('an unknown scheme is INVALID_URL listing the schemes known, in order, the password hidden', () => {
    const fn = () => createBackend('redis://:hunter2@h:6379', [memoryProvider, echoProvider]);
    expect(thrown(fn)).toMatchObject({ code: 'INVALID_URL' });
    expect(thrown(fn).message).toBe('unknown backend URL "redis://:***@h:6379": expected one of memory:, echo:, echos:');
    expect(thrown(() => createBackend('no scheme', [echoProvider]))).toMatchObject({ code: 'INVALID_URL' });
  });

  test.each([[''], ['  '], [42], [null]])('%p is INVALID_URL', (url) => {
    expect(thrown(() => createBackend(url as string, [memoryProvider]))).toMatchObject({ code: 'INVALID_URL' });
  });

  test('a list that is empty, not providers, or two providers on one scheme is INVALID_OPTIONS', () => {
    expect(thrown(() => createBackend('memory:', []))).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(thrown(() => createBackend('memory:', [{ kind: 'x' } as never]))).toMatchObject({ code: 'INVALID_OPTIONS' });
    const other: BackendProvider = { kind: 'other', schemes: ['ECHO'], fromUrl: () => new MemoryBackend() };
    expect(thrown(() => createBackend('memory:', [memoryProvider, echoProvider, other])).message).toMatch(/echo and other both serve echo:/);
    // The same provider twice is harmless.
    expect(providerFor('memory:', [memoryProvider, memoryProvider])).toBe(memoryProvider);
  });

  test('a provider called directly refuses another scheme with INVALID_URL', () => {
    expect(thrown(() => echoProvider.fromUrl('memory:'))).toMatchObject({ code: 'INVALID_URL' });
    expect(thrown(() => memoryProvider.fromUrl('echo://u:hunter2@h')).message).not.toMatch(/hunter2/);
    expect(thrown(() => memoryProvider.fromUrl('memory:x'))).toMatchObject({ code: 'INVALID_URL' });
  });

  test('isBackendProvider tells a provider by its shape', () => {
    expect(isBackendProvider(memoryProvider)).toBe(true);
    expect(isBackendProvider({ kind: 'x', schemes: [], fromUrl: () => null })).toBe(false);
    expect(isBackendProvider({ kind: 'x', schemes: ['x'] })).toBe(false);
    expect(isBackendProvider(null)).toBe(false);
  });
});
