import { ConclaveError, redactUrl } from '@conclave/core';
import { assertOptionKeys, assertPositiveInteger, describeValue, optionKeys } from '@conclave/core/spi';

const KIND = 'etcd';

/**
 * The `Etcd3` client methods and fields conclave uses on a client you pass in. Declared by shape
 * so that a client from another copy of `etcd3` fits too; an `Etcd3` from `new Etcd3({ hosts })` does.
 */
export interface EtcdClient {
  /** The etcd3 client's KV service. */
  readonly kv: unknown;
  /** The etcd3 client's Lease service. */
  readonly leaseClient: unknown;
  /** The etcd3 client's Watch service. */
  readonly watchClient: unknown;
  /** Closes the client (never called on a client you own). */
  close(): void;
}

/** Settings shared by both ways of building an `EtcdBackend`. */
interface CommonOptions {
  /**
   * Key prefix under which every election keeps its keys (`<prefix><election>/…`). Default
   * `conclave/`. Printable ASCII without spaces, at most 128 characters.
   */
  prefix?: string;
  /**
   * Longest time any single call waits for the server, ms. Default 5 000. Bounds every gRPC call
   * (its deadline), so a dead or frozen server makes calls reject with `BACKEND_UNAVAILABLE`.
   */
  requestTimeoutMs?: number;
}

/** Use an `Etcd3` client you own: the backend never closes it. */
export interface EtcdClientOptions extends CommonOptions {
  /** An `Etcd3` client from the `etcd3` package. */
  client: EtcdClient;
}

/** Let the backend open (and close on `close()`) its own client. */
export interface EtcdHostsOptions extends CommonOptions {
  /** Client URLs or `host:port` of the members, e.g. `['127.0.0.1:2379']`. */
  hosts: string[];
  /** etcd user and password (etcd's authentication), when the cluster has it enabled. */
  auth?: {
    /** The etcd user. */
    username: string;
    /** Its password (never logged). */
    password: string;
  };
}

/** Options of `new EtcdBackend(options)`: a client you own, or the members' hosts (then the backend owns the client). */
export type EtcdBackendOptions = EtcdClientOptions | EtcdHostsOptions;

const ETCD_OPTION_KEYS = optionKeys<EtcdBackendOptions>({ client: true, hosts: true, auth: true, prefix: true, requestTimeoutMs: true });

/** The default `prefix` of the election keys. */
export const DEFAULT_PREFIX = 'conclave/';
/** The default `requestTimeoutMs`, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

export type ResolvedEtcdOptions =
  | { mode: 'client'; client: EtcdClient; prefix: string; requestTimeoutMs: number }
  | { mode: 'hosts'; hosts: string[]; auth: { username: string; password: string } | null; prefix: string; requestTimeoutMs: number };

/** Validates options before any I/O: `INVALID_OPTIONS` or `INVALID_NAME`. */
export function resolveEtcdOptions(options: unknown): ResolvedEtcdOptions {
  assertOptionKeys(options, ETCD_OPTION_KEYS, 'EtcdBackend options', KIND);
  const o = options as Record<string, unknown>;
  const prefix = o.prefix ?? DEFAULT_PREFIX;
  assertPrefix(prefix);
  const requestTimeoutMs = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  assertPositiveInteger(requestTimeoutMs, 'requestTimeoutMs', KIND);
  const hasClient = o.client !== undefined;
  const hasHosts = o.hosts !== undefined;
  if (hasClient === hasHosts) {
    throw new ConclaveError('INVALID_OPTIONS', 'pass exactly one of `client` or `hosts`', { backend: KIND });
  }
  if (hasClient) {
    const client = o.client as Partial<EtcdClient> | null;
    if (typeof client !== 'object' || client === null || client.watchClient === undefined || client.kv === undefined || client.leaseClient === undefined) {
      throw new ConclaveError('INVALID_OPTIONS', `client must be an etcd3 Etcd3 client, got ${describeValue(client)}`, { backend: KIND });
    }
    if (o.auth !== undefined) {
      throw new ConclaveError('INVALID_OPTIONS', '`auth` applies to `hosts`, not to a client you pass in', { backend: KIND });
    }
    return { mode: 'client', client: client as EtcdClient, prefix, requestTimeoutMs };
  }
  const hosts = o.hosts;
  if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((h) => typeof h === 'string' && HOST.test(h))) {
    throw new ConclaveError('INVALID_OPTIONS', `hosts must be a non-empty array of host:port or http(s)://host:port, got ${describeValue(hosts)}`, {
      backend: KIND,
    });
  }
  let auth: { username: string; password: string } | null = null;
  if (o.auth !== undefined) {
    const a = o.auth as { username?: unknown; password?: unknown } | null;
    if (typeof a !== 'object' || a === null || typeof a.username !== 'string' || a.username === '' || typeof a.password !== 'string') {
      // Never echo the value: it holds a password.
      throw new ConclaveError('INVALID_OPTIONS', 'auth must be { username, password } (non-empty strings)', { backend: KIND });
    }
    auth = { username: a.username, password: a.password };
  }
  return { mode: 'hosts', hosts: [...(hosts as string[])], auth, prefix, requestTimeoutMs };
}

const HOST = /^(?:https?:\/\/)?(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$/;

/** Throws `INVALID_NAME` unless `prefix` is a usable key prefix. */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(prefix)) {
    throw new ConclaveError('INVALID_NAME', `prefix must be 1–128 printable ASCII characters without spaces, got ${describeValue(prefix)}`, {
      backend: KIND,
    });
  }
}

/** Query parameters of an etcd URL. */
export const ETCD_URL_PARAMETERS = ['prefix', 'requestTimeoutMs'] as const;

/**
 * `etcd://[user:pass@]h1:2379[,h2:2379…][?prefix=P&requestTimeoutMs=N]` → EtcdBackend options.
 * Throws `INVALID_URL` (never quoting the password); no I/O.
 */
export function parseEtcdUrl(url: string): EtcdHostsOptions {
  const bad = (why: string) => new ConclaveError('INVALID_URL', `invalid etcd URL ${describeValue(redactUrl(url))}: ${why}`, { backend: KIND });
  const match = /^etcd:\/\/(.*)$/is.exec(url);
  if (!match) throw bad('expected etcd://host:2379[,host:2379…]');
  // The user info ends at the last `@` (a password may hold a raw `@`, not a raw `/ ? #`).
  const at = match[1]!.lastIndexOf('@');
  const credentials = at === -1 ? undefined : match[1]!.slice(0, at);
  const rest = at === -1 ? match[1]! : match[1]!.slice(at + 1);
  const parts = /^([^/?#]+)\/?(?:\?([^#]*))?$/.exec(rest);
  if (!parts) {
    if (rest === '' || /^[/?]/.test(rest)) throw bad('no server given');
    if (rest.includes('#')) throw bad('a URL fragment ("#…") is not allowed');
    throw bad('a path is not allowed (give the key prefix as ?prefix=…)');
  }
  const [, hostList, query] = parts;
  const hosts = hostList!.split(',');
  for (const h of hosts) {
    if (!HOST.test(h)) throw bad(`each server must be host:port, got ${JSON.stringify(h)}`);
    const port = Number(h.slice(h.lastIndexOf(':') + 1));
    if (port < 1 || port > 65535) throw bad(`port out of range in ${JSON.stringify(h)}`);
  }
  const options: EtcdHostsOptions = { hosts };
  if (credentials !== undefined) {
    if (/[/?#]/.test(credentials)) throw bad('a "/", "?" or "#" in the user or password must be percent-encoded');
    const colon = credentials.indexOf(':');
    if (colon <= 0) throw bad('credentials must be user:password');
    try {
      options.auth = { username: decodeURIComponent(credentials.slice(0, colon)), password: decodeURIComponent(credentials.slice(colon + 1)) };
    } catch {
      throw bad('bad percent-encoding in the user or password (a % must start %XX; write %25 for a % sign)');
    }
  }
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(query ?? '')) {
    if (!(ETCD_URL_PARAMETERS as readonly string[]).includes(key)) {
      throw bad(`unknown parameter ${JSON.stringify(key)} (known: ${ETCD_URL_PARAMETERS.join(', ')})`);
    }
    if (seen.has(key)) throw bad(`parameter ${JSON.stringify(key)} given twice`);
    seen.add(key);
    if (key === 'prefix') {
      options.prefix = value;
    } else {
      if (!/^[0-9]{1,9}$/.test(value) || Number(value) <= 0) throw bad(`${key} must be a positive whole number of ms, got ${JSON.stringify(value)}`);
      options.requestTimeoutMs = Number(value);
    }
  }
  return options;
}
