import { ConclaveError, redactUrl } from '@conclave/core';
import { assertOptionKeys, assertPositiveInteger, describeValue, optionKeys } from '@conclave/core/spi';

const KIND = 'zookeeper';

/**
 * The node-zookeeper-client `Client` methods conclave calls on a client you pass in. Declared by
 * shape, so that this package's types do not need the driver's typings (which it does not ship);
 * a `Client` from `createClient()` fits, with or without `@types/node-zookeeper-client`.
 */
export interface ZookeeperClient {
  /** The connection state. */
  getState(): unknown;
  /** The session timeout the server granted, ms. */
  getSessionTimeout(): number;
  /** Subscribes to connection state changes. */
  on(event: 'state', listener: (...args: any[]) => void): unknown;
  /** Unsubscribes from them. */
  removeListener(event: 'state', listener: (...args: any[]) => void): unknown;
  /** Creates a node. */
  create(path: string, ...args: any[]): void;
  /** Reads a node's stat, optionally with a watch. */
  exists(path: string, ...args: any[]): void;
  /** Lists a node's children, optionally with a watch. */
  getChildren(path: string, ...args: any[]): void;
  /** Reads a node's data and stat. */
  getData(path: string, ...args: any[]): void;
  /** Writes a node's data. */
  setData(path: string, ...args: any[]): void;
  /** Deletes a node. */
  remove(path: string, ...args: any[]): void;
  /** Creates a path and its missing parents. */
  mkdirp(path: string, ...args: any[]): void;
  /** Starts a multi-operation transaction. */
  transaction(): unknown;
}

/**
 * A node-zookeeper-client `ACL`, made with `new ACL(Permission.ALL, new Id('world', 'anyone'))`.
 * Only its identity is spelled out: the permission field is `permission` at run time but `perms`
 * in `@types/node-zookeeper-client`, and an ACL typed either way must fit.
 */
export interface ZookeeperAcl {
  /** Who the ACL grants to: a scheme (`world`, `digest`, …) and an id in it. */
  id: {
    /** The scheme: `world`, `digest`, `ip`, `auth`, … */
    scheme: string;
    /** The identity within the scheme (`anyone` for `world`). */
    id: string;
  };
}

/** Settings shared by both ways of building a `ZookeeperBackend`. */
interface CommonOptions {
  /**
   * Persistent node under which every election gets its own child node, e.g. `/conclave`.
   * Default `/conclave`. Created on first use (with the backend's ACL) and never deleted: the
   * children's sequence counter lives in the election node, see the README.
   */
  root?: string;
  /**
   * Longest time any single call waits for the server, ms. Default 5 000. node-zookeeper-client
   * queues requests while disconnected and never times them out; this bound is why a dead server
   * makes calls reject with `BACKEND_UNAVAILABLE` instead of hanging.
   */
  requestTimeoutMs?: number;
}

/** Use a client you own: it is never closed by the backend. */
export interface ZookeeperClientOptions extends CommonOptions {
  /**
   * A node-zookeeper-client `Client` on which you called `connect()` (the backend never calls
   * it: a second `connect()` would open a second socket). Requests wait until it is connected.
   * If its session expires the backend cannot open a new one: calls reject with
   * `BACKEND_UNAVAILABLE` until you build a new backend on a new client.
   */
  client: ZookeeperClient;
  /** ACL of the nodes the backend creates. Default: world:anyone, all permissions. */
  acl?: ZookeeperAcl[];
}

/** Let the backend open (and reopen after a session expiry) its own client. */
export interface ZookeeperConnectOptions extends CommonOptions {
  /**
   * `host:port[,host:port…][/chroot]`. A chroot that does not exist yet is created (persistent,
   * with the backend's ACL) by the first call that writes; reads on it find no leader.
   */
  connect: string;
  /**
   * Session timeout asked for, ms. Default: the lease of the backend's first campaign, so that a
   * crashed leader's node goes about one lease after its last contact, as on other backends (a
   * backend that only reads asks for 15 000). The server clamps it into
   * [minSessionTimeout, maxSessionTimeout] (by default 2–20 ticks) and expires sessions on tick
   * boundaries; a warning is emitted when the session granted is longer than a lease asked for.
   * Leases granted never exceed two thirds of the negotiated value, see the README.
   */
  sessionTimeoutMs?: number;
  /**
   * Digest credentials `user:password`. When set, the backend adds them to its session
   * (`addAuthInfo('digest', …)`) and creates every node with CREATOR_ALL_ACL, so only sessions
   * authenticated as the same user can read or change the elections.
   */
  auth?: string;
}

/** Options of `new ZookeeperBackend(options)`: a client you own, or a connect string (then the backend owns the client). */
export type ZookeeperBackendOptions = ZookeeperClientOptions | ZookeeperConnectOptions;

const ZOOKEEPER_OPTION_KEYS = optionKeys<ZookeeperBackendOptions>({
  client: true,
  acl: true,
  connect: true,
  sessionTimeoutMs: true,
  auth: true,
  root: true,
  requestTimeoutMs: true,
});

/** The default `root`: the parent node of the election nodes. */
export const DEFAULT_ROOT = '/conclave';
/** Session timeout of a backend that has not campaigned yet (reads only), ms. */
export const READ_ONLY_SESSION_TIMEOUT_MS = 15_000;
/** The default `requestTimeoutMs`, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

/** Options after validation, with defaults filled in. */
export type ResolvedZookeeperOptions =
  | { mode: 'client'; client: ZookeeperClient; acl: ZookeeperAcl[] | null; root: string; requestTimeoutMs: number }
  | {
      mode: 'connect';
      connect: string;
      /** Null: derived from the first campaign's lease (see `ZookeeperSession.adoptLease`). */
      sessionTimeoutMs: number | null;
      auth: string | null;
      root: string;
      requestTimeoutMs: number;
    };

/** Validates options before any I/O: `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME`. */
export function resolveZookeeperOptions(options: unknown): ResolvedZookeeperOptions {
  assertOptionKeys(options, ZOOKEEPER_OPTION_KEYS, 'ZookeeperBackend options', KIND);
  const o = options as Record<string, unknown>;
  const root = o.root ?? DEFAULT_ROOT;
  assertZnodePath(root, 'root');
  const requestTimeoutMs = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  assertPositiveInteger(requestTimeoutMs, 'requestTimeoutMs', KIND);

  const hasClient = o.client !== undefined;
  const hasConnect = o.connect !== undefined;
  if (hasClient === hasConnect) {
    throw new ConclaveError('INVALID_OPTIONS', 'pass exactly one of `client` or `connect`', { backend: KIND });
  }
  if (hasClient) {
    const client = o.client as Partial<ZookeeperClient> | null;
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof client.getChildren !== 'function' ||
      typeof client.transaction !== 'function' ||
      typeof client.getState !== 'function'
    ) {
      throw new ConclaveError('INVALID_OPTIONS', `client must be a node-zookeeper-client Client, got ${describeValue(client)}`, {
        backend: KIND,
      });
    }
    for (const key of ['sessionTimeoutMs', 'auth']) {
      if (o[key] !== undefined) {
        throw new ConclaveError('INVALID_OPTIONS', `${key} applies to \`connect\`, not to a client you pass in`, {
          backend: KIND,
        });
      }
    }
    if (o.acl !== undefined && (!Array.isArray(o.acl) || o.acl.length === 0)) {
      throw new ConclaveError('INVALID_OPTIONS', `acl must be a non-empty array of ACL, got ${describeValue(o.acl)}`, {
        backend: KIND,
      });
    }
    return { mode: 'client', client: client as ZookeeperClient, acl: (o.acl as ZookeeperAcl[] | undefined) ?? null, root, requestTimeoutMs };
  }
  if (o.acl !== undefined) {
    throw new ConclaveError('INVALID_OPTIONS', 'acl applies to a client you pass in; with `connect`, use `auth`', {
      backend: KIND,
    });
  }
  const connect = o.connect;
  assertConnectString(connect);
  const sessionTimeoutMs = o.sessionTimeoutMs ?? null;
  if (sessionTimeoutMs !== null) assertPositiveInteger(sessionTimeoutMs, 'sessionTimeoutMs', KIND);
  let auth: string | null = null;
  if (o.auth !== undefined) {
    if (typeof o.auth !== 'string' || !/^[^:]+:.+$/.test(o.auth)) {
      // Never echo the value: it holds a password.
      throw new ConclaveError('INVALID_OPTIONS', 'auth must be a "user:password" string', { backend: KIND });
    }
    auth = o.auth;
  }
  return { mode: 'connect', connect, sessionTimeoutMs, auth, root, requestTimeoutMs };
}

/**
 * Throws `INVALID_URL` unless `value` is `host:port[,host:port…][/chroot]`. node-zookeeper-client
 * would assert (a plain Error) or silently default odd ports; we reject them before any I/O.
 */
export function assertConnectString(value: unknown): asserts value is string {
  const bad = (why: string): never => {
    throw new ConclaveError('INVALID_URL', `invalid ZooKeeper connect string ${describeValue(redactConnect(value))}: ${why}`, {
      backend: KIND,
    });
  };
  if (typeof value !== 'string' || value.trim() === '') bad('expected "host:port[,host:port…][/chroot]"');
  const text = value as string;
  if (text.includes('@')) bad('credentials go in `auth` ("user:password"), not in the connect string');
  if (/\s/.test(text)) bad('it contains whitespace');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) bad('give host:port pairs, not a URL');
  const slash = text.indexOf('/');
  const hosts = slash === -1 ? text : text.slice(0, slash);
  const chroot = slash === -1 ? '' : text.slice(slash);
  if (hosts === '') bad('no server given');
  for (const entry of hosts.split(',')) {
    // host:port, or [v6]:port
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(entry);
    if (!m) bad(`"${entry}" is not host:port`);
    const port = m![2] === undefined ? 2181 : Number(m![2]);
    if (!(port >= 1 && port <= 65535)) bad(`port ${m![2]} is out of range`);
  }
  if (chroot !== '' && chroot !== '/') {
    try {
      assertZnodePath(chroot, 'chroot');
    } catch (err) {
      bad(err instanceof Error ? err.message : String(err));
    }
  }
}

/** The connect string as a message may show it: user info (which does not belong there) hidden. */
function redactConnect(value: unknown): unknown {
  return typeof value === 'string' ? redactUrl(value) : value;
}

/** Throws `INVALID_NAME` unless `value` is an absolute znode path: `/a/b`, no empty, `.` or `..` segment. */
export function assertZnodePath(value: unknown, what: string): asserts value is string {
  const fail = (why: string): never => {
    throw new ConclaveError('INVALID_NAME', `${what} ${describeValue(value)} is not a valid ZooKeeper path: ${why}`, {
      backend: KIND,
    });
  };
  if (typeof value !== 'string') return fail('expected a string');
  if (!value.startsWith('/') || value === '/') fail('it must start with "/" and name a node below the root');
  if (value.endsWith('/')) fail('it must not end with "/"');
  if (value.length > 512) fail('it is longer than 512 characters');
  for (const segment of value.slice(1).split('/')) {
    if (segment === '') fail('it has an empty segment');
    if (segment === '.' || segment === '..') fail('"." and ".." are not allowed');
    if (segment === 'zookeeper' && value.startsWith('/zookeeper')) fail('/zookeeper is reserved');
    // Printable ASCII only: control and non-ASCII characters are legal in ZooKeeper but make
    // nodes that zkCli and logs show badly.
    if (!/^[\x21-\x7e]+$/.test(segment)) fail('only printable ASCII characters are allowed');
  }
}
