import type { RedisOptions } from 'ioredis';
import { ConclaveError, redactUrl } from '@conclave/core';
import { describeValue } from '@conclave/core/spi';
import { urlBoolean, urlMinReplicas } from './redis-options';

const KIND = 'redis';

/** Sentinel's own port, when a host names none. */
export const DEFAULT_SENTINEL_PORT = 26379;

/** Query parameters a `redis+sentinel://` URL may carry; anything else is refused. */
export const REDIS_SENTINEL_URL_PARAMETERS = ['sentinelUsername', 'sentinelPassword', 'minReplicas', 'tokenClockFloor'] as const;

/** A `redis+sentinel://` URL taken apart: the ioredis options that find the master, and the query's settings. */
export interface RedisSentinelUrlSettings {
  /** `sentinels`, `name`, `db` and the credentials, as ioredis takes them. */
  redisOptions: RedisOptions;
  /** Database index from the path, 0 when none. */
  db: number;
  /** `tokenClockFloor=`, when given. */
  tokenClockFloor?: boolean;
  /** `minReplicas=`, when given. */
  minReplicas?: number | 'auto';
}

/** Whether `url` is a Sentinel URL (`redis+sentinel://`, any case). */
export function isSentinelUrl(url: unknown): url is string {
  return typeof url === 'string' && /^redis\+sentinel:\/\//i.test(url);
}

/**
 * `redis+sentinel://[[user]:password@]host[:26379][,host[:26379]…]/<masterName>[/<db>][?…]`, in
 * ioredis' terms: the user info is the master's (`username`, `password`), the hosts are the
 * `sentinels`, the first path segment the monitored master's `name`; `sentinelUsername` and
 * `sentinelPassword` (query) log in to Sentinel. `minReplicas` and `tokenClockFloor` as on a
 * `redis://` URL. Throws `INVALID_URL` (never quoting a password); no I/O.
 */
export function parseRedisSentinelUrl(url: unknown): RedisSentinelUrlSettings {
  if (!isSentinelUrl(url)) {
    throw new ConclaveError('INVALID_URL', `a Redis Sentinel URL must start redis+sentinel://, got ${describeValue(typeof url === 'string' ? redactUrl(url) : url)}`, {
      backend: KIND,
    });
  }
  const bad = (why: string) =>
    new ConclaveError('INVALID_URL', `invalid Redis Sentinel URL ${JSON.stringify(redactUrl(url))}: ${why}`, { backend: KIND });
  const body = url.slice('redis+sentinel://'.length);
  // The user info ends at the last `@` (a password may hold a raw `@`); it must not hold the
  // characters that end a URL's authority, which a password must percent-encode.
  const at = body.lastIndexOf('@');
  const auth = at === -1 ? undefined : body.slice(0, at);
  const afterAuth = at === -1 ? body : body.slice(at + 1);
  if (auth !== undefined && /[/?#]/.test(auth)) throw bad('a "/", "?" or "#" in the user or password must be percent-encoded');
  const pathStart = afterAuth.search(/[/?#]/);
  const hosts = pathStart === -1 ? afterAuth : afterAuth.slice(0, pathStart);
  const rest = pathStart === -1 ? '' : afterAuth.slice(pathStart);
  const parts = /^(\/[^?#]*)?(?:\?([^#]*))?$/.exec(rest);
  if (!parts) throw bad('a URL fragment ("#…") is not allowed');
  const [, path = '', query = ''] = parts;

  const options: RedisOptions = {};
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    const user = colon === -1 ? '' : auth.slice(0, colon);
    const password = colon === -1 ? auth : auth.slice(colon + 1);
    const username = decode(user, bad);
    if (username) options.username = username;
    options.password = decode(password, bad);
  }

  if (hosts === '') throw bad('missing Sentinel host');
  options.sentinels = hosts.split(',').map((host) => {
    if (host === '') throw bad('empty Sentinel host');
    let parsed: URL;
    try {
      parsed = new URL(`redis://${host}`);
    } catch {
      throw bad(`cannot parse Sentinel host ${JSON.stringify(host)}`);
    }
    if (!parsed.hostname || parsed.pathname !== '' || parsed.username !== '') throw bad(`cannot parse Sentinel host ${JSON.stringify(host)}`);
    const port = parsed.port === '' ? DEFAULT_SENTINEL_PORT : Number(parsed.port);
    if (port < 1 || port > 65535) throw bad('bad port');
    // WHATWG URL keeps the brackets of an IPv6 address; the driver wants it bare.
    return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port };
  });

  const segments = path.split('/').slice(1);
  const name = segments[0] ?? '';
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name)) throw bad('the path must name the master Sentinel monitors (/<masterName>[/<db>])');
  if (segments.length > 2 || (segments.length === 2 && !/^\d{1,5}$/.test(segments[1]!))) {
    throw bad('after the master name, the path may only hold a database number (/<masterName>/<db>)');
  }
  options.name = name;
  const db = segments.length === 2 ? Number(segments[1]) : 0;
  if (db !== 0) options.db = db;

  const settings: RedisSentinelUrlSettings = { redisOptions: options, db };
  for (const [key, value] of new URLSearchParams(query)) {
    if (key === 'sentinelUsername') options.sentinelUsername = value;
    else if (key === 'sentinelPassword') options.sentinelPassword = value;
    else if (key === 'tokenClockFloor') settings.tokenClockFloor = urlBoolean(key, value, bad);
    else if (key === 'minReplicas') settings.minReplicas = urlMinReplicas(value, bad);
    else throw bad(`unknown parameter ${JSON.stringify(key)} (known: ${REDIS_SENTINEL_URL_PARAMETERS.join(', ')})`);
  }
  return settings;
}

function decode(component: string, bad: (why: string) => ConclaveError): string {
  try {
    return decodeURIComponent(component);
  } catch {
    // Caught here, before the driver: its own error would quote the password.
    throw bad('bad percent-encoding in the user or password (a % must start %XX; write %25 for a % sign)');
  }
}
