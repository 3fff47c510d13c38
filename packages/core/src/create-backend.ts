import type { ElectionBackend } from './backend';
import { isBackendProvider, type BackendProvider } from './backend-provider';
import { ConclaveError } from './errors';
import { redactUrl } from './redact-url';
import { describe as describeValue } from './validation';

/**
 * Builds a backend from a URL with whichever of `providers` serves its scheme, for commands and
 * applications that keep the backend choice in configuration. The backend owns its connections:
 * `backend.close()` closes them.
 *
 * Throws `INVALID_URL` (not a non-empty string, or a scheme none of `providers` serves; the
 * message lists the schemes known), `INVALID_OPTIONS` (a list that is not providers, or two that
 * serve one scheme), or whatever the provider throws, always before any I/O. No message quotes a
 * password (see `redactUrl`).
 */
export function createBackend(url: URL | string, providers: readonly BackendProvider[]): ElectionBackend {
  const text = backendUrlText(url);
  return providerFor(text, providers).fromUrl(text, { providers });
}

/** The provider among `providers` that serves `url`'s scheme; throws as `createBackend` does. */
export function providerFor(url: URL | string, providers: readonly BackendProvider[]): BackendProvider {
  const text = backendUrlText(url);
  const known = assertProviders(providers);
  const provider = known.get(schemeOf(text) ?? '');
  if (!provider) {
    throw new ConclaveError(
      'INVALID_URL',
      `unknown backend URL ${describeValue(redactUrl(text))}: expected one of ${[...known.keys()].map((s) => `${s}:`).join(', ')}`,
    );
  }
  return provider;
}

/**
 * For a provider's `fromUrl`: the URL as text, once it is known to be a non-empty string whose
 * scheme is one of `provider.schemes` (`INVALID_URL` otherwise, the password hidden). A provider
 * called directly, not through `createBackend`, gets the same first checks.
 */
export function providerUrl(provider: BackendProvider, url: URL | string): string {
  const text = backendUrlText(url);
  const scheme = schemeOf(text);
  if (scheme === undefined || !provider.schemes.some((s) => s.toLowerCase() === scheme)) {
    throw new ConclaveError(
      'INVALID_URL',
      `not a ${provider.kind} URL: ${describeValue(redactUrl(text))}: expected ${provider.schemes.map((s) => `${s}:`).join(' or ')}`,
    );
  }
  return text;
}

function backendUrlText(url: URL | string): string {
  // A URL object is taken as its text: the providers parse text (several hosts do not fit `URL`).
  const text = url instanceof URL ? url.href : url;
  if (typeof text !== 'string' || text.trim() === '') {
    throw new ConclaveError('INVALID_URL', `backend URL must be a non-empty string, got ${describeValue(text)}`);
  }
  return text;
}

/** The URL's scheme, lowercased; undefined when it does not start with one. */
function schemeOf(url: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
}

/** scheme → provider, in the order given; INVALID_OPTIONS for anything but distinct providers. */
function assertProviders(providers: readonly BackendProvider[]): Map<string, BackendProvider> {
  if (!Array.isArray(providers) || providers.length === 0) {
    throw new ConclaveError('INVALID_OPTIONS', `createBackend needs a non-empty list of backend providers, got ${describeValue(providers)}`);
  }
  const bySchemes = new Map<string, BackendProvider>();
  for (const provider of providers) {
    if (!isBackendProvider(provider)) {
      throw new ConclaveError('INVALID_OPTIONS', `not a backend provider (kind, schemes, fromUrl): ${describeValue(provider)}`);
    }
    for (const scheme of provider.schemes.map((s) => s.toLowerCase())) {
      const other = bySchemes.get(scheme);
      // Two kinds on one scheme: which one a URL meant cannot be told.
      if (other && other !== provider) {
        throw new ConclaveError('INVALID_OPTIONS', `backend providers ${other.kind} and ${provider.kind} both serve ${scheme}:`);
      }
      bySchemes.set(scheme, provider);
    }
  }
  return bySchemes;
}
