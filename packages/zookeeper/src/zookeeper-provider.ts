import { ConclaveError, redactUrl } from '@conclave/core';
import { describeValue, providerUrl, type BackendProvider } from '@conclave/core/spi';
import { ZookeeperBackend } from './zookeeper-backend';
import type { ZookeeperConnectOptions } from './zookeeper-options';

/** Query parameters of a ZooKeeper URL. */
export const ZOOKEEPER_URL_PARAMETERS = ['sessionTimeoutMs', 'requestTimeoutMs', 'root'] as const;

/**
 * `zookeeper://[user:pass@]h1:2181[,h2:2181…][/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/path]`
 * → a `ZookeeperBackend`; credentials become a digest ACL.
 */
export const zookeeperProvider: BackendProvider = {
  kind: 'zookeeper',
  schemes: ['zookeeper'],
  urlForms: [{ form: 'zookeeper://[user:pass@]h1:2181[,h2:2181…][/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/P]', what: 'ephemeral-sequential nodes' }],
  fromUrl(url) {
    return new ZookeeperBackend(parseZookeeperUrl(providerUrl(zookeeperProvider, url)));
  },
};

/**
 * `zookeeper://[user:pass@]hosts[/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/path]` →
 * ZookeeperBackend options. Throws `INVALID_URL` (never quoting the password); no I/O.
 */
export function parseZookeeperUrl(url: string): ZookeeperConnectOptions {
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
