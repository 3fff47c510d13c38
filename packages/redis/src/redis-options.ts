import type { Redis, RedisOptions } from 'ioredis';
import { ConclaveError, DEFAULT_LEASE_MS, redactUrl } from '@conclave/core';
import { assertOptionKeys, assertOptionsObject, assertPositiveInteger, describeValue, optionKeys } from '@conclave/core/spi';
import { DEFAULT_KEY_PREFIX, assertKeyPrefix } from './redis-keys';
import { isSentinelUrl, parseRedisSentinelUrl } from './redis-sentinel-url';

const KIND = 'redis';

/**
 * The part of an ioredis client that conclave calls: scripts go through `pipeline()`, the
 * subscriber is a `duplicate()`, and the connection is followed through `status` and its events.
 * Declared by shape rather than as ioredis' `Redis` class, so that clients of ioredis 5 and 6
 * (whose `Redis` types differ) are both accepted.
 */
export interface RedisClient {
  /** ioredis's connection status (`ready`, `connecting`, …). */
  readonly status: string;
  /** Connects a client created with `lazyConnect`. */
  connect(): Promise<unknown>;
  /** Starts a pipeline (several commands in one round trip). */
  pipeline(): unknown;
  /** A new connection with the same options (for pub/sub). */
  duplicate(override?: object): unknown;
  /** Subscribes to the client's events (`error`, `ready`, messages). */
  on(event: string, listener: (...args: any[]) => void): unknown;
}

/**
 * How to reach Redis. Give exactly one of `client`, `clients`, `url`, `urls`, or only
 * `redisOptions` (e.g. Sentinel: `{ sentinels: [...], name: 'mymaster' }`).
 *
 * - One master (`client`, `url`, `redisOptions`): one Lua script per call, one round trip.
 * - Quorum (`clients`, `urls`, or a `url` with comma-separated hosts): the Redlock algorithm over
 *   N independent masters (use an odd N ≥ 3); a lease is held when a majority holds it.
 *
 * Clients you pass in are never closed by conclave; clients created from `url`/`urls`/
 * `redisOptions` are closed by `close()`.
 */
export interface RedisBackendOptions {
  /** An ioredis client you own (single master). */
  client?: RedisClient;
  /** ioredis clients you own, one per independent master (quorum mode). */
  clients?: RedisClient[];
  /**
   * `redis://[user:pass@]host:port[/db][?tokenClockFloor=false&minReplicas=1]` or `rediss://…`
   * (TLS); comma-separated hosts = quorum. Through Sentinel:
   * `redis+sentinel://[[user]:pass@]host:26379[,host:26379…]/<masterName>[/<db>][?sentinelPassword=…]`
   * (see `parseRedisSentinelUrl`). Other query parameters are refused (`INVALID_URL`); a
   * database the server does not have fails the first call with `INVALID_URL`.
   */
  url?: string;
  /** One URL per independent master (quorum mode). */
  urls?: string[];
  /**
   * ioredis options for the clients conclave creates (TLS, password, Sentinel, …). Merged over
   * conclave's fail-fast defaults (see `failFastRedisOptions`); yours win.
   */
  redisOptions?: RedisOptions;
  /** Prefix of every key and channel: letters, digits and `. _ : -`, 1–64 characters. Default `conclave:`. */
  keyPrefix?: string;
  /** Lease given by `forceLeader` when none is passed, ms. Default 10 000. */
  defaultLeaseMs?: number;
  /** Longest wait for one round trip (or for a connection attempt in progress), ms. Default 2000. */
  commandTimeoutMs?: number;
  /**
   * Publish a message on release/force/clear so followers wake at once. Default true. Turning it
   * off leaves followers to their fallback poll (used by tests of lost messages).
   */
  publish?: boolean;
  /** Keep a sorted set of candidates so `listCandidates()` works. Default true. */
  trackCandidates?: boolean;
  /**
   * Quorum mode: fraction of the lease kept back for clock-rate drift between masters (Redlock's
   * drift factor); the granted lease is `lease − lease × driftFactor − 2 ms`. Default 0.01.
   */
  driftFactor?: number;
  /**
   * A new term's token is at least the server's time in ms (as well as greater than the last
   * term), so tokens keep increasing even if the term counter is lost (a restart without
   * persistence), as long as the server clock does not go back. Default true, or the URL's
   * `?tokenClockFloor=`; this option wins over the URL.
   */
  tokenClockFloor?: boolean;
  /**
   * Whether followers learn of the leader's renewals from Redis keyspace notifications, so that
   * they send nothing while their subscription is live (one master only; a quorum always looks at
   * each lease end). They need `notify-keyspace-events` to hold `K` and `g` (or `K` and `A`);
   * `Kgx` is advised (`x`: an expired lease is pushed too).
   * - `'auto'` (default): use them when the server already sends them (`CONFIG GET`); never
   *   change the server's configuration.
   * - `'configure'`: also turn them on (`CONFIG SET`, adding `Kgx` to what is set).
   * - `'off'`: never; followers look at each lease end (`changes.leaseEnds` false).
   * When the server does not send them (or refuses `CONFIG`), followers look at each lease end
   * as with `'off'`.
   */
  keyspaceEvents?: KeyspaceEventsMode;
  /**
   * How many replicas must acknowledge a write that gives or keeps leadership (a campaign that
   * takes or extends the lease, a renewal, a forced install, a revocation, a raised token floor)
   * before it counts: `WAIT` is sent right after the batch's scripts, in the same round trip, with
   * a timeout of a tenth of the lease (see `replicaAckTimeoutMs`). Fewer acknowledgements: the
   * call rejects with `BACKEND_UNAVAILABLE` naming the count ("0 of 1 replicas acknowledged…"), so
   * a leader steps down at its deadline and a candidate does not lead. This is what stops a
   * deposed master (a graceful failover, a master cut off from Sentinel) from confirming its old
   * leader while a promoted replica elects another.
   * - `'auto'` (default): the replicas the master reports online (`INFO replication`, replicas
   *   in `state=online`) when the backend first reaches it, read again on reaching another master
   *   (a failover), and raised — never lowered — while it stays on the same one as replicas join.
   * - a number: exactly that many; 0 = no `WAIT` (a single server without replicas).
   * The trade: a replica lost for good holds back renewals and new terms until it is back or
   * `minReplicas` is lowered; `health()` and the logs name the replicas. One master only: a quorum
   * takes `'auto'` as 0 and refuses a positive number (`INVALID_OPTIONS`).
   */
  minReplicas?: number | 'auto';
}

const REDIS_OPTION_KEYS = optionKeys<RedisBackendOptions>({
  client: true,
  clients: true,
  url: true,
  urls: true,
  redisOptions: true,
  keyPrefix: true,
  defaultLeaseMs: true,
  commandTimeoutMs: true,
  publish: true,
  trackCandidates: true,
  driftFactor: true,
  tokenClockFloor: true,
  keyspaceEvents: true,
  minReplicas: true,
});

/** See `RedisBackendOptions.keyspaceEvents`. */
export type KeyspaceEventsMode = 'auto' | 'configure' | 'off';

/**
 * What the backend needs to open one master. `db`: the database the URL names, which the node
 * checks the server really selected (ioredis carries on in database 0 when SELECT fails).
 */
export type NodeSource = { client: Redis; owned: false } | { url: string | null; db?: number; owned: true };

export interface ResolvedRedisOptions {
  sources: NodeSource[];
  quorum: boolean;
  redisOptions: RedisOptions;
  keyPrefix: string;
  defaultLeaseMs: number;
  commandTimeoutMs: number;
  publish: boolean;
  trackCandidates: boolean;
  driftFactor: number;
  tokenClockFloor: boolean;
  keyspaceEvents: KeyspaceEventsMode;
  /** `'auto'` or a fixed count; 0 in quorum mode. */
  minReplicas: number | 'auto';
}

/**
 * ioredis settings that make a dead server fail calls fast while ioredis reconnects in the
 * background: no retries of a command across reconnects (a lease write replayed late would
 * surprise the caller, who has long given up), bounded connect time, quick reconnect attempts.
 * The backend also refuses to queue a call while the client is not connected (see `RedisNode`).
 */
export function failFastRedisOptions(commandTimeoutMs: number): RedisOptions {
  return {
    connectTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    enableOfflineQueue: true, // calls are gated by RedisNode; the queue only bridges the first connect
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 5), 1000),
    // close() must not keep the process alive waiting for a half-closed socket to a dead server.
    disconnectTimeout: 500,
    // Through Sentinel: a bounded question to each Sentinel, and a switch of master heard at once
    // (+switch-master) rather than when the old master drops the connection. Ignored otherwise.
    sentinelCommandTimeout: commandTimeoutMs,
    failoverDetector: true,
  };
}

export function resolveRedisOptions(options: unknown): ResolvedRedisOptions {
  assertOptionKeys(options, REDIS_OPTION_KEYS, 'RedisBackend options', KIND);
  const o = options as RedisBackendOptions;
  const given = (['client', 'clients', 'url', 'urls'] as const).filter((k) => o[k] !== undefined);
  if (given.length > 1) {
    throw new ConclaveError('INVALID_OPTIONS', `give only one of client, clients, url, urls (got ${given.join(', ')})`, {
      backend: KIND,
    });
  }
  if (o.redisOptions !== undefined) assertOptionsObject(o.redisOptions, 'redisOptions', KIND);
  if (given.length === 0 && o.redisOptions === undefined) {
    throw new ConclaveError('INVALID_OPTIONS', 'give one of client, clients, url, urls or redisOptions', { backend: KIND });
  }

  let sources: NodeSource[];
  let quorum = false;
  let urlFloor: boolean | undefined;
  let urlMinReplicas: number | 'auto' | undefined;
  let sentinelOptions: RedisOptions = {};
  if (o.client !== undefined) {
    assertClient(o.client, 'client');
    sources = [{ client: asIoredis(o.client), owned: false }];
  } else if (o.clients !== undefined) {
    if (!Array.isArray(o.clients) || o.clients.length === 0) {
      throw new ConclaveError('INVALID_OPTIONS', `clients must be a non-empty array, got ${describeValue(o.clients)}`, {
        backend: KIND,
      });
    }
    o.clients.forEach((c, i) => assertClient(c, `clients[${i}]`));
    if (new Set(o.clients).size !== o.clients.length) {
      throw new ConclaveError('INVALID_OPTIONS', 'clients must be distinct (one per master)', { backend: KIND });
    }
    sources = o.clients.map((client) => ({ client: asIoredis(client), owned: false as const }));
    quorum = true;
  } else if (o.urls !== undefined) {
    if (!Array.isArray(o.urls) || o.urls.length === 0) {
      throw new ConclaveError('INVALID_OPTIONS', `urls must be a non-empty array, got ${describeValue(o.urls)}`, {
        backend: KIND,
      });
    }
    const parsed = o.urls.map((u) => parseRedisUrlSettings(u));
    sources = parsed.flatMap(({ urls, db }) => urls.map((url) => ({ url, db, owned: true as const })));
    urlFloor = parsed.find((p) => p.tokenClockFloor !== undefined)?.tokenClockFloor;
    urlMinReplicas = parsed.find((p) => p.minReplicas !== undefined)?.minReplicas;
    quorum = true;
  } else if (o.url !== undefined && isSentinelUrl(o.url)) {
    const settings = parseRedisSentinelUrl(o.url);
    sources = [{ url: null, db: settings.db, owned: true }];
    urlFloor = settings.tokenClockFloor;
    urlMinReplicas = settings.minReplicas;
    sentinelOptions = settings.redisOptions;
  } else if (o.url !== undefined) {
    const { urls, db, tokenClockFloor: floor, minReplicas: replicas } = parseRedisUrlSettings(o.url);
    sources = urls.map((url) => ({ url, db, owned: true as const }));
    urlFloor = floor;
    urlMinReplicas = replicas;
    quorum = urls.length > 1;
  } else {
    sources = [{ url: null, owned: true }];
  }
  if (quorum) {
    const keys = sources.map((s) => ('url' in s ? s.url : null)).filter((u): u is string => u !== null);
    if (new Set(keys).size !== keys.length) {
      throw new ConclaveError('INVALID_URL', 'quorum URLs must name distinct masters', { backend: KIND });
    }
  }

  const keyPrefix = o.keyPrefix ?? DEFAULT_KEY_PREFIX;
  assertKeyPrefix(keyPrefix);
  const defaultLeaseMs = o.defaultLeaseMs ?? DEFAULT_LEASE_MS;
  assertPositiveInteger(defaultLeaseMs, 'defaultLeaseMs', KIND);
  const commandTimeoutMs = o.commandTimeoutMs ?? 2000;
  assertPositiveInteger(commandTimeoutMs, 'commandTimeoutMs', KIND);
  const driftFactor = o.driftFactor ?? 0.01;
  if (typeof driftFactor !== 'number' || !Number.isFinite(driftFactor) || driftFactor < 0 || driftFactor >= 0.5) {
    throw new ConclaveError('INVALID_OPTIONS', `driftFactor must be a number in [0, 0.5), got ${describeValue(driftFactor)}`, {
      backend: KIND,
    });
  }
  const publish = assertBoolean(o.publish, 'publish', true);
  const trackCandidates = assertBoolean(o.trackCandidates, 'trackCandidates', true);
  const tokenClockFloor = assertBoolean(o.tokenClockFloor, 'tokenClockFloor', urlFloor ?? true);
  const keyspaceEvents = o.keyspaceEvents ?? 'auto';
  if (keyspaceEvents !== 'auto' && keyspaceEvents !== 'configure' && keyspaceEvents !== 'off') {
    throw new ConclaveError('INVALID_OPTIONS', `keyspaceEvents must be 'auto', 'configure' or 'off', got ${describeValue(keyspaceEvents)}`, {
      backend: KIND,
    });
  }
  const minReplicas = resolveMinReplicas(o.minReplicas ?? urlMinReplicas ?? 'auto', quorum);
  const redisOptions: RedisOptions = { ...failFastRedisOptions(commandTimeoutMs), ...sentinelOptions, ...(o.redisOptions ?? {}) };
  return {
    sources,
    quorum,
    redisOptions,
    keyPrefix,
    defaultLeaseMs,
    commandTimeoutMs,
    publish,
    trackCandidates,
    driftFactor,
    tokenClockFloor,
    keyspaceEvents,
    minReplicas,
  };
}

/** Checks `minReplicas` (see `RedisBackendOptions.minReplicas`); a quorum's masters are independent, so it is 0 there. */
function resolveMinReplicas(value: unknown, quorum: boolean): number | 'auto' {
  if (value !== 'auto' && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)) {
    throw new ConclaveError('INVALID_OPTIONS', `minReplicas must be 'auto' or a whole number ≥ 0, got ${describeValue(value)}`, {
      backend: KIND,
    });
  }
  if (!quorum) return value;
  if (value !== 'auto' && value > 0) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `minReplicas ${value} is for one master: a Redlock quorum counts independent masters, not their replicas (leave it out, or 0)`,
      { backend: KIND },
    );
  }
  return 0;
}

/** Query parameters a Redis URL may carry; anything else is refused (ioredis would take it as an option). */
export const REDIS_URL_PARAMETERS = ['tokenClockFloor', 'minReplicas'] as const;

/** A Redis URL taken apart: one URL per master, for ioredis, and the settings from its query. */
export interface RedisUrlSettings {
  /** One URL per master: one for a single master, several for a quorum. */
  urls: string[];
  /** Database index from the path (`/3`), 0 when none. Checked against the server on connect. */
  db: number;
  /** `tokenClockFloor=`, when given. */
  tokenClockFloor?: boolean;
  /** `minReplicas=`, when given. */
  minReplicas?: number | 'auto';
}

/**
 * Splits and checks a Redis URL. `redis://user:pass@h1:1,h2:2/0` (several hosts) becomes one URL
 * per host with the same scheme, credentials and database. Throws `INVALID_URL` (never quoting
 * the password); no I/O.
 */
export function parseRedisUrl(url: unknown): string[] {
  return parseRedisUrlSettings(url).urls;
}

/** `parseRedisUrl`, with the database index and the query's settings. */
export function parseRedisUrlSettings(url: unknown): RedisUrlSettings {
  if (typeof url !== 'string' || url.length === 0) {
    throw new ConclaveError('INVALID_URL', `a Redis URL must be a non-empty string, got ${describeValue(url)}`, {
      backend: KIND,
    });
  }
  const bad = (why: string) =>
    new ConclaveError('INVALID_URL', `invalid Redis URL ${JSON.stringify(redactUrl(url))}: ${why}`, { backend: KIND });
  const m = /^(rediss?):\/\/(.*)$/is.exec(url);
  if (!m) throw bad('expected redis://[user:pass@]host:port[/db] or rediss://…');
  const scheme = m[1]!.toLowerCase();
  // The user info ends at the last `@` (a password may hold a raw `@`); it must not hold the
  // characters that end a URL's authority, which a password must percent-encode.
  const at = m[2]!.lastIndexOf('@');
  const auth = at === -1 ? undefined : m[2]!.slice(0, at);
  const rest = at === -1 ? m[2]! : m[2]!.slice(at + 1);
  if (auth !== undefined) {
    if (/[/?#]/.test(auth)) throw bad('a "/", "?" or "#" in the user or password must be percent-encoded');
    try {
      decodeURIComponent(auth);
    } catch {
      // Caught here, before the driver: its own error would quote the password.
      throw bad('bad percent-encoding in the user or password (a % must start %XX; write %25 for a % sign)');
    }
  }
  const parts = /^([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/.exec(rest);
  if (!parts) throw bad('a URL fragment ("#…") is not allowed');
  const [, hosts = '', path = '', query = ''] = parts;
  if (hosts === '') throw bad('missing host');
  if (path !== '' && path !== '/' && !/^\/\d{1,5}$/.test(path)) throw bad('the path must be a database number (/0, /1, …)');
  const db = path.length > 1 ? Number(path.slice(1)) : 0;
  const settings: RedisUrlSettings = { urls: [], db };
  for (const [key, value] of new URLSearchParams(query)) {
    if (key === 'tokenClockFloor') {
      settings.tokenClockFloor = urlBoolean(key, value, bad);
    } else if (key === 'minReplicas') {
      settings.minReplicas = urlMinReplicas(value, bad);
    } else {
      throw bad(`unknown parameter ${JSON.stringify(key)} (known: ${REDIS_URL_PARAMETERS.join(', ')})`);
    }
  }
  settings.urls = hosts.split(',').map((host) => {
    if (host === '') throw bad('empty host');
    const one = `${scheme}://${auth !== undefined ? `${auth}@` : ''}${host}${path}`;
    let parsed: URL;
    try {
      parsed = new URL(one);
    } catch {
      throw bad(`cannot parse host ${JSON.stringify(host)}`);
    }
    if (!parsed.hostname) throw bad('missing host');
    if (parsed.port !== '' && (Number(parsed.port) < 1 || Number(parsed.port) > 65535)) throw bad('bad port');
    return one;
  });
  return settings;
}

/** A URL's `true`/`false` parameter. */
export function urlBoolean(key: string, value: string, bad: (why: string) => ConclaveError): boolean {
  if (value !== 'true' && value !== 'false') throw bad(`${key} must be true or false, got ${JSON.stringify(value)}`);
  return value === 'true';
}

/** `?minReplicas=auto` or a whole number. */
export function urlMinReplicas(value: string, bad: (why: string) => ConclaveError): number | 'auto' {
  if (value === 'auto') return value;
  if (!/^\d{1,3}$/.test(value)) throw bad(`minReplicas must be auto or a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A checked client, seen through the ioredis version this package is built with. */
function asIoredis(client: RedisClient): Redis {
  return client as unknown as Redis;
}

function assertClient(client: unknown, what: string): void {
  const c = client as Partial<Redis> | null;
  if (typeof c !== 'object' || c === null || typeof c.pipeline !== 'function' || typeof c.duplicate !== 'function') {
    throw new ConclaveError('INVALID_OPTIONS', `${what} must be an ioredis client, got ${describeValue(client)}`, {
      backend: KIND,
    });
  }
}

function assertBoolean(value: unknown, what: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new ConclaveError('INVALID_OPTIONS', `${what} must be a boolean, got ${describeValue(value)}`, { backend: KIND });
  }
  return value;
}
