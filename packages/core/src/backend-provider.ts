import type { ElectionBackend } from './backend';

/**
 * One backend kind's URLs: the schemes it serves and how to build a backend from such a URL.
 * Each backend package exports its own (`mysqlProvider` in `@conclave/mysql`, …), and whatever
 * turns URLs into backends (`createBackend`, the `conclave` command, a test's child process) is
 * given a list of them, so no single place has to know every kind.
 *
 * The contract:
 * - `schemes` are lowercase, without the colon (`['redis', 'rediss']`); a URL's scheme matches
 *   them whatever its case. No two providers given to one `createBackend` share a scheme.
 * - `fromUrl` checks the whole URL before any I/O, synchronously, and throws `ConclaveError`:
 *   `INVALID_URL` for a URL it cannot use (another scheme, unparsable, an unknown or bad query
 *   parameter), `INVALID_OPTIONS` (or the backend's own code) for settings the backend refuses.
 *   Never a plain `Error`.
 * - No message, detail or cause of those errors shows a password: a URL is shown only through
 *   `redactUrl`, and a provider refuses a URL it cannot split safely rather than guess.
 * - Once the URL is accepted the backend may start connecting (Redis does). The backend returned
 *   owns its connections: `close()` closes them.
 * - The URL is read as text, as the user wrote it. Forms that WHATWG `URL` cannot hold (several
 *   hosts `h1:2181,h2:2181`, a raw `@` in a password) need a string; a `URL` is read as its `href`.
 * - `context.providers` is the list `createBackend` is composing. A provider whose URL holds other
 *   backend URLs (`migrate:`) builds those through it, with `createBackend`, and refuses to work
 *   without it; the others ignore it.
 */
export interface BackendProvider {
  /** The backend kind it builds (`ElectionBackend.kind`): `mysql`, `redis`, … */
  readonly kind: string;
  /** The URL schemes it serves, lowercase, without the colon. */
  readonly schemes: readonly string[];
  /** A backend for `url` (one of `schemes`), checked whole before any I/O; see the contract above. */
  fromUrl(url: URL | string, context?: BackendProviderContext): ElectionBackend;
  /**
   * The URL's forms, for a command's help (`conclave --help` lists every registered provider's):
   * one entry per shape, the form with its optional parts in brackets, and what it is.
   */
  readonly urlForms?: readonly BackendUrlForm[];
}

/** One shape of a provider's URLs, as a command's help shows it. */
export interface BackendUrlForm {
  /** The URL with placeholders, optional parts in brackets: `redis://[user:pass@]host:6379[/db]`. */
  readonly form: string;
  /** What it is, in a few words. */
  readonly what: string;
}

/** What `createBackend` passes on to a provider. */
export interface BackendProviderContext {
  /** Every provider the URL is being resolved against, this one included. */
  readonly providers: readonly BackendProvider[];
}

/** Whether `value` has the shape of a `BackendProvider` (to pick providers out of a loaded module). */
export function isBackendProvider(value: unknown): value is BackendProvider {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<BackendProvider>;
  return (
    typeof p.kind === 'string' &&
    Array.isArray(p.schemes) &&
    p.schemes.length > 0 &&
    p.schemes.every((s) => typeof s === 'string') &&
    typeof p.fromUrl === 'function'
  );
}
