import { ConclaveError, createBackend as createFromProviders, redactUrl } from '@conclave/core';
import { providerFor, type ElectionBackend } from '@conclave/core/spi';
import { createMigratingBackend as createMigrating, migrateProvider, type MigratingBackend } from '@conclave/migrate';
import { BACKEND_PROVIDERS } from './backend-providers';

/** The URL schemes `createBackend` understands. */
export const BACKEND_SCHEMES: readonly string[] = BACKEND_PROVIDERS.flatMap((provider) => provider.schemes);

/**
 * Builds a backend from a URL, for the CLI and for applications that keep the backend choice in
 * configuration. The backend owns its connections: `backend.close()` closes them.
 *
 * - `memory:` — in this process only (demos, tests).
 * - `mysql://user:pass@host:3306/db?table=leader_election` (or `mariadb://`); also
 *   `connectionLimit` and the TLS parameters `ssl`, `sslCa`, `sslCert`, `sslKey`,
 *   `sslRejectUnauthorized`.
 * - `redis://[user:pass@]host:6379[/db][?tokenClockFloor=false]`, `rediss://…` for TLS; a comma
 *   list of hosts (`redis://h1:6379,h2:6379,h3:6379`) runs the quorum over independent masters.
 * - `zookeeper://[user:pass@]h1:2181[,h2:2181…][/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/path]`;
 *   credentials become a digest ACL.
 * - `migrate:<from-only|dual|to-only>?from=<url>&to=<url>` — an election moving between two
 *   backends (`@conclave/migrate`); the inner URLs are percent-encoded.
 *
 * Each is parsed by its package's provider: core's `memory:`, and that of every `@conclave` backend
 * package installed beside this one (`BACKEND_PROVIDERS`: PostgreSQL and etcd too, and any other);
 * `createBackend(url, providers)` in `@conclave/core` does the same over a list of your own.
 *
 * Throws `INVALID_URL` (unknown scheme, unparsable URL, unknown query parameter) or the
 * backend's own option errors, before any I/O. No message quotes a password (see `redactUrl`).
 */
export function createBackend(url: string): ElectionBackend {
  return createFromProviders(url, BACKEND_PROVIDERS);
}

/** `migrate:<phase>?from=<url>&to=<url>` → a MigratingBackend over two backends built from their URLs. */
export function createMigratingBackend(url: string): MigratingBackend {
  return createMigrating(url, BACKEND_PROVIDERS);
}

/**
 * The two URLs of `conclave migrate status`: each a backend URL of a known scheme (`INVALID_URL`
 * otherwise, checked for both before either backend is built: Redis connects at once), not a
 * `migrate:` URL (`INVALID_URL`: the command reads each side itself), and not the same URL twice
 * (`INVALID_OPTIONS`; compared up to the scheme's case and aliases, `mariadb:` as `mysql:`, and a trailing `/`).
 */
export function assertMigrationUrls(fromUrl: string, toUrl: string): void {
  for (const [flag, url] of [['--from', fromUrl], ['--to', toUrl]] as const) {
    if (providerFor(url, BACKEND_PROVIDERS) === migrateProvider) {
      throw new ConclaveError('INVALID_URL', `${flag} must be a plain backend URL, not a migration URL: give the migration's from and to URLs`);
    }
  }
  if (sameUrl(fromUrl, toUrl)) {
    throw new ConclaveError('INVALID_OPTIONS', `--from and --to name the same backend (${redactUrl(fromUrl.trim())}): a migration moves between two`);
  }
}

function sameUrl(a: string, b: string): boolean {
  // A scheme is read as its provider's first one, so that aliases (`mariadb:`) compare equal.
  const normal = (url: string) =>
    url
      .trim()
      .replace(/^([a-z][a-z0-9+.-]*):/i, (scheme) => {
        const name = scheme.slice(0, -1).toLowerCase();
        return `${BACKEND_PROVIDERS.find((p) => p.schemes.includes(name))?.schemes[0] ?? name}:`;
      })
      .replace(/\/+$/, '');
  return normal(a) === normal(b);
}

/** The URL with any password hidden (see `redactUrl` in `@conclave/core`). */
export { redactUrl };
