import { ConclaveError, MemoryBackend, redactUrl, type ElectionBackend } from '@conclave/core';
import { describeValue } from '@conclave/core/internal';
import { MysqlBackend } from '@conclave/mysql';
import { RedisBackend } from '@conclave/redis';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { MIGRATION_PHASES, MigratingBackend, type MigrationPhase } from '@conclave/migrate';

/** The URL schemes `createBackend` understands. */
export const BACKEND_SCHEMES = ['memory', 'mysql', 'mariadb', 'redis', 'rediss', 'zookeeper', 'migrate'] as const;

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
 * Throws `INVALID_URL` (unknown scheme, unparsable URL, unknown query parameter) or the
 * backend's own option errors, before any I/O. No message quotes a password (see `redactUrl`).
 */
export function createBackend(url: string): ElectionBackend {
  switch (backendScheme(url)) {
    case 'memory':
      if (url !== 'memory:' && url !== 'memory://') {
        throw new ConclaveError('INVALID_URL', `the memory backend takes no settings: use "memory:", got ${describeValue(redactUrl(url))}`);
      }
      return new MemoryBackend();
    case 'mysql':
    case 'mariadb':
      return new MysqlBackend({ uri: url });
    case 'redis':
    case 'rediss':
      return new RedisBackend({ url });
    case 'zookeeper':
      return new ZookeeperBackend(parseZookeeperUrl(url));
    case 'migrate':
      return createMigratingBackend(url);
  }
}

/** The URL's scheme, lowercased; `INVALID_URL` unless it is one of `BACKEND_SCHEMES`. */
export function backendScheme(url: string): (typeof BACKEND_SCHEMES)[number] {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new ConclaveError('INVALID_URL', `backend URL must be a non-empty string, got ${describeValue(url)}`);
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (!(BACKEND_SCHEMES as readonly string[]).includes(scheme ?? '')) {
    throw new ConclaveError(
      'INVALID_URL',
      `unknown backend URL ${describeValue(redactUrl(url))}: expected one of ${BACKEND_SCHEMES.map((s) => `${s}:`).join(', ')}`,
    );
  }
  return scheme as (typeof BACKEND_SCHEMES)[number];
}

/** `migrate:<phase>?from=<url>&to=<url>` → a MigratingBackend over two backends built from their URLs. */
export function createMigratingBackend(url: string): MigratingBackend {
  const match = /^migrate:([a-z-]+)\?(.*)$/i.exec(url);
  const phase = match?.[1] as MigrationPhase | undefined;
  if (!match || !phase || !MIGRATION_PHASES.includes(phase)) {
    throw new ConclaveError(
      'INVALID_URL',
      `cannot parse the migration URL ${describeValue(redactUrl(url))}: expected migrate:<${MIGRATION_PHASES.join('|')}>?from=<url>&to=<url>`,
    );
  }
  const params = new URLSearchParams(match[2]);
  const fromUrl = params.get('from');
  const toUrl = params.get('to');
  if (!fromUrl || !toUrl || [...params.keys()].some((k) => k !== 'from' && k !== 'to')) {
    throw new ConclaveError('INVALID_URL', 'a migration URL needs exactly the parameters from=<url> and to=<url>');
  }
  if (/^migrate:/i.test(fromUrl) || /^migrate:/i.test(toUrl)) {
    throw new ConclaveError('INVALID_URL', 'a migration cannot be nested in another migration');
  }
  const from = createBackend(fromUrl);
  let to: ElectionBackend;
  try {
    to = createBackend(toUrl);
  } catch (err) {
    void from.close();
    throw err;
  }
  try {
    return new MigratingBackend({ from, to, phase });
  } catch (err) {
    // A pair the migration refuses (INVALID_OPTIONS): the two backends are nobody's to close.
    void from.close().catch(() => undefined);
    void to.close().catch(() => undefined);
    throw err;
  }
}

/**
 * The two URLs of `conclave migrate status`: each a backend URL of a known scheme (`INVALID_URL`
 * otherwise, checked for both before either backend is built: Redis connects at once), not a
 * `migrate:` URL (`INVALID_URL`: the command reads each side itself), and not the same URL twice
 * (`INVALID_OPTIONS`; compared up to the scheme's case, `mariadb:` as `mysql:` and a trailing `/`).
 */
export function assertMigrationUrls(fromUrl: string, toUrl: string): void {
  for (const [flag, url] of [['--from', fromUrl], ['--to', toUrl]] as const) {
    if (backendScheme(url) === 'migrate') {
      throw new ConclaveError('INVALID_URL', `${flag} must be a plain backend URL, not a migration URL: give the migration's from and to URLs`);
    }
  }
  if (sameUrl(fromUrl, toUrl)) {
    throw new ConclaveError('INVALID_OPTIONS', `--from and --to name the same backend (${redactUrl(fromUrl.trim())}): a migration moves between two`);
  }
}

function sameUrl(a: string, b: string): boolean {
  const normal = (url: string) =>
    url
      .trim()
      .replace(/^([a-z][a-z0-9+.-]*):/i, (scheme) => scheme.toLowerCase())
      .replace(/^mariadb:/, 'mysql:')
      .replace(/\/+$/, '');
  return normal(a) === normal(b);
}

/** Query parameters of a ZooKeeper URL. */
export const ZOOKEEPER_URL_PARAMETERS = ['sessionTimeoutMs', 'requestTimeoutMs', 'root'] as const;

/**
 * `zookeeper://[user:pass@]hosts[/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/path]` →
 * ZookeeperBackend options. Throws `INVALID_URL` (never quoting the password); no I/O.
 */
export function parseZookeeperUrl(url: string): ConstructorParameters<typeof ZookeeperBackend>[0] {
  const bad = (why: string) => new ConclaveError('INVALID_URL', `invalid ZooKeeper URL ${describeValue(redactUrl(url))}: ${why}`);
  const match = /^zookeeper:\/\/(.*)$/is.exec(url);
  if (!match) throw bad('expected zookeeper://host:2181[,host:2181…][/chroot]');
  // The user info ends at the last `@` (a password may hold a raw `@`, not a raw `/ ? #`).
  const at = match[1]!.lastIndexOf('@');
  const credentials = at === -1 ? undefined : match[1]!.slice(0, at);
  const rest = at === -1 ? match[1]! : match[1]!.slice(at + 1);
  const parts = /^([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/.exec(rest);
  if (!parts) throw bad(rest === '' || /^[/?]/.test(rest) ? 'no server given' : 'a URL fragment ("#…") is not allowed');
  const [, hosts, chroot, query] = parts;
  const connect = `${hosts}${chroot && chroot !== '/' ? chroot : ''}`;
  const options: { connect: string; auth?: string; sessionTimeoutMs?: number; requestTimeoutMs?: number; root?: string } = { connect };
  if (credentials !== undefined) {
    if (/[/?#]/.test(credentials)) throw bad('a "/", "?" or "#" in the user or password must be percent-encoded');
    let auth: string;
    try {
      auth = decodeURIComponent(credentials);
    } catch {
      throw bad('bad percent-encoding in the user or password (a % must start %XX; write %25 for a % sign)');
    }
    if (!/^[^:]+:.+$/s.test(auth)) throw bad('credentials must be user:password');
    options.auth = auth;
  }
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(query ?? '')) {
    if (!(ZOOKEEPER_URL_PARAMETERS as readonly string[]).includes(key)) {
      throw bad(`unknown parameter ${JSON.stringify(key)} (known: ${ZOOKEEPER_URL_PARAMETERS.join(', ')})`);
    }
    if (seen.has(key)) throw bad(`parameter ${JSON.stringify(key)} given twice`);
    seen.add(key);
    if (key === 'root') {
      options.root = value;
    } else {
      if (!/^[0-9]{1,9}$/.test(value) || Number(value) <= 0) throw bad(`${key} must be a positive whole number of ms, got ${JSON.stringify(value)}`);
      options[key as 'sessionTimeoutMs' | 'requestTimeoutMs'] = Number(value);
    }
  }
  return options;
}

/** The URL with any password hidden (see `redactUrl` in `@conclave/core`). */
export { redactUrl };
