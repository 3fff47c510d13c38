import { performance } from 'node:perf_hooks';
import { ACL, Id, Permission, State, createClient, type Client } from 'node-zookeeper-client';
import { ConclaveError } from '@conclave/core';
import { READ_ONLY_SESSION_TIMEOUT_MS, type ResolvedZookeeperOptions } from './zookeeper-options';
import { chrootOf, createChroot } from './zookeeper-chroot';
import { managerOf, shutDown, socketOf } from './zookeeper-client-util';
import { HandshakeWatch } from './zookeeper-handshake';
import { relaxPing } from './zookeeper-ping';
import { ConnectionRefusedError, followConnectAttempts, hostsOf } from './zookeeper-refusal';
import { RequestTimeoutError } from './zookeeper-request-timeout';

const KIND = 'zookeeper';

/** One ZooKeeper session as the backend sees it: a client and the generation it belongs to. */
export interface SessionHandle {
  client: Client;
  /** Bumped at every session expiry: nodes created in an older generation are gone. */
  generation: number;
}

export type SessionEvent =
  /** The session expired: every ephemeral node it held is gone. */
  | 'expired'
  /** (Re)connected within the session: watches were re-armed by the client; wake everyone anyway. */
  | 'connected';

type Callback<T> = (error: unknown, value?: T) => void;

/**
 * Owns the connection: opens the client on first use (when it is ours), waits for it to be
 * connected before sending anything, bounds every request by a deadline, and opens a new session
 * after an expiry (node-zookeeper-client cannot revive an expired one).
 */
export class ZookeeperSession {
  private client: Client | null = null;
  private generation = 0;
  /** A passed-in client whose session expired: nothing more can be done with it. */
  private dead = false;
  /** A passed-in client whose credentials the server refused (it closed the connection for good). */
  private authRefused = false;
  private closed = false;
  private lastKick = 0;
  /** Whether the current client ever had a session (else closing it has nothing to end). */
  private hadSession = false;
  private chrootCreation: Promise<void> | null = null;
  /** performance.now() of the last answer (or error reply) the current client received. */
  private lastReplyAt = 0;
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  /** Requests waiting for the current client to connect (one state listener for all of them). */
  private readonly waiters = new Set<() => void>();
  /**
   * Per waiting request: refused connection attempts since it began to wait (reset by any TCP
   * connection). Once every server has refused it, it fails at once: a refused server is not
   * coming back within the request timeout the way a slow one may answer.
   */
  private readonly refusals = new Map<() => void, { count: number; fail: () => void }>();
  private readonly stateListener = (state: State) => this.onState(state);
  /** Bounds a connection attempt that has a socket but no session yet (see `HandshakeWatch`). */
  private readonly handshake: HandshakeWatch;

  /** The servers of the connect string (none for a passed-in client). */
  private readonly hosts: string[];
  /** Without a sessionTimeoutMs option: the first campaign's lease, once there was one. */
  private leaseTimeoutMs: number | null = null;
  /** Warnings already given, by code: each is given once per backend. */
  private readonly warned = new Set<string>();

  constructor(private readonly options: ResolvedZookeeperOptions) {
    this.hosts = options.mode === 'connect' ? hostsOf(options.connect) : [];
    this.handshake = new HandshakeWatch((client) => !this.closed && this.client === client, options.requestTimeoutMs);
  }

  /** ACL for the nodes the backend creates. */
  acl(): ACL[] {
    if (this.options.mode === 'client' && this.options.acl) return this.options.acl as ACL[];
    if (this.options.mode === 'connect' && this.options.auth) {
      // CREATOR_ALL_ACL: all permissions for whoever authenticated as the creator did.
      return [new ACL(Permission.ALL, new Id('auth', ''))];
    }
    return [new ACL(Permission.ALL, new Id('world', 'anyone'))];
  }

  /**
   * Creates the chroot of the connect string if it is missing (see `createChroot`); resolves
   * false, having done nothing, when there is no chroot this backend can see (no chroot, or a
   * client passed in). Calls made while it runs share the attempt.
   */
  async ensureChroot(until: number): Promise<boolean> {
    if (this.options.mode !== 'connect' || chrootOf(this.options.connect) === null) return false;
    if (!this.chrootCreation) {
      const { connect, auth } = this.options;
      const attempt = createChroot({ connect, auth, sessionTimeoutMs: this.askedTimeoutMs() }, this.acl(), until);
      this.chrootCreation = attempt;
      // Only the attempt in flight is shared: a later call (after a failure, or after someone
      // deleted the chroot) tries again.
      const clear = () => {
        if (this.chrootCreation === attempt) this.chrootCreation = null;
      };
      attempt.then(clear, clear);
    }
    await this.chrootCreation;
    return true;
  }

  /** Subscribes to session events; returns the unsubscribe function. */
  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The current session, opening it if needed. Throws `CLOSED` or `BACKEND_UNAVAILABLE`. */
  current(): SessionHandle {
    if (this.closed) throw new ConclaveError('CLOSED', 'the ZooKeeper backend is closed', { backend: KIND });
    if (this.authRefused) {
      throw new ConclaveError(
        'BACKEND_AUTH',
        'ZooKeeper refused the credentials of the client passed in (AUTH_FAILED); build a new backend on a client with valid ones',
        { backend: KIND },
      );
    }
    if (this.dead) {
      throw new ConclaveError(
        'BACKEND_UNAVAILABLE',
        'the ZooKeeper session of the client passed in has expired; build a new backend on a new client',
        { backend: KIND },
      );
    }
    if (!this.client) this.client = this.open();
    return { client: this.client, generation: this.generation };
  }

  /** Whether `handle` still names the live session. */
  isCurrent(handle: SessionHandle): boolean {
    return !this.closed && !this.dead && !this.authRefused && this.client === handle.client && this.generation === handle.generation;
  }

  /** The session timeout, ms: the server's grant once connected, else what was asked. */
  timeoutMs(): number {
    const client = this.client ?? (this.options.mode === 'client' ? this.options.client : null);
    const granted = client?.getSessionTimeout();
    if (granted !== undefined && granted > 0) return granted;
    return this.options.mode === 'connect' ? this.askedTimeoutMs() : 0;
  }

  /** The session timeout a new session asks for: the option, else the first campaign's lease. */
  askedTimeoutMs(): number {
    if (this.options.mode !== 'connect') return 0;
    return this.options.sessionTimeoutMs ?? this.leaseTimeoutMs ?? READ_ONLY_SESSION_TIMEOUT_MS;
  }

  /**
   * Called before each campaign, with its lease. A ZooKeeper lease is the session: a crashed
   * leader's node goes when the session expires, a session timeout after the server last heard
   * from it. So, unless the user chose a timeout, the first campaign's lease becomes the session
   * timeout, and a session opened earlier for reads (with the read-only default) is replaced, if
   * `idle()` (no candidacy of this backend lives on it; asked only then: it scans them all). A
   * lease shorter than the session (another election of this backend, a timeout set by hand, a
   * client passed in) is honoured as the grant allows, but a crash is noticed only at the
   * session's end: that is warned about, once.
   */
  adoptLease(leaseMs: number, idle: () => boolean, election: string): void {
    if (this.options.mode === 'connect' && this.options.sessionTimeoutMs === null && this.leaseTimeoutMs === null) {
      this.leaseTimeoutMs = leaseMs;
      if (this.client && idle()) this.replaceClient();
      return;
    }
    const sessionMs = this.options.mode === 'connect' ? this.askedTimeoutMs() : this.timeoutMs();
    if (sessionMs > leaseMs) {
      const source =
        this.options.mode === 'client'
          ? 'the session of the client passed in'
          : this.options.sessionTimeoutMs !== null
            ? 'the sessionTimeoutMs option'
            : 'the lease of the first election this backend campaigned in';
      this.warnOnce(
        'CONCLAVE_ZOOKEEPER_SESSION_LONGER_THAN_LEASE',
        `ZooKeeper session timeout ${sessionMs} ms (${source}) is longer than the ${leaseMs} ms lease of election "${election}": ` +
          `a crashed leader there is replaced only after up to ${sessionMs} ms. Use one backend per lease, or set sessionTimeoutMs to the lease.`,
      );
    }
  }

  /** The session timeout the server granted, ms (valid once connected). */
  negotiatedTimeoutMs(handle: SessionHandle): number {
    return handle.client.getSessionTimeout();
  }

  /**
   * Runs one request on `handle`'s client once it is connected. Resolves with the value, rejects
   * with the client's error (a ZooKeeper `Exception`, see `zkCode`) or with `BACKEND_UNAVAILABLE`
   * if nothing came back by `until` (performance.now() ms).
   */
  run<T>(handle: SessionHandle, until: number, what: string, op: (client: Client, done: Callback<T>) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let detach: (() => void) | null = null;
      let sentAt: number | null = null;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        detach?.();
        // Drop the connection only if it went silent: sent, and nothing at all came back since.
        // A server that answers other requests is busy, not gone; dropping its connection would
        // fail every request in flight and make a loaded server (many elections) busier still.
        // Looked at on the next turn: a timer that fires late, after the event loop was busy for
        // a while, runs before the I/O callbacks of that loop iteration, i.e. before the answers
        // already waiting on the socket are read; setImmediate runs after them (Node's event
        // loop guide: timers, then poll, then check).
        if (sentAt !== null) {
          const sent = sentAt;
          setImmediate(() => {
            if (this.lastReplyAt <= sent) this.kick(handle);
          });
        }
        reject(new RequestTimeoutError(what));
      }, Math.max(1, until - performance.now()));
      const done: Callback<T> = (error, value) => {
        if (sentAt !== null) this.lastReplyAt = performance.now();
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(value as T);
      };
      const send = () => {
        detach?.();
        detach = null;
        sentAt = performance.now();
        try {
          op(handle.client, done);
        } catch (err) {
          // The client asserts synchronously on arguments it dislikes.
          done(new ConclaveError('BACKEND_ERROR', `${what}: ${err instanceof Error ? err.message : String(err)}`, {
            backend: KIND,
            cause: err,
          }));
        }
      };
      // Requests queued while disconnected would reach the server before the auth packet the
      // client sends on reconnect (and fail with NO_AUTH), so nothing is sent until connected.
      if (handle.client.getState() === State.SYNC_CONNECTED) {
        send();
      } else {
        const waiter = () => {
          if (!settled) send();
        };
        this.waiters.add(waiter);
        this.refusals.set(waiter, {
          count: 0,
          fail: () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            detach?.();
            reject(new ConnectionRefusedError(this.hosts.join(',')));
          },
        });
        detach = () => {
          this.waiters.delete(waiter);
          this.refusals.delete(waiter);
        };
      }
    });
  }

  /** Closes the client if it is ours; forgets a passed-in one. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handshake.stop();
    this.listeners.clear();
    this.refusals.clear();
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.removeListener('state', this.stateListener);
    // A client that never had a session has nothing to end on the server: no grace to wait.
    if (this.options.mode === 'connect') await shutDown(client, this.hadSession ? Math.min(this.options.requestTimeoutMs, 2000) : 0);
  }

  private open(): Client {
    if (this.options.mode === 'client') {
      const client = this.options.client as Client; // checked by shape in resolveZookeeperOptions
      client.on('state', this.stateListener);
      if (client.getState() !== State.SYNC_CONNECTED) this.handshake.start(client);
      return client;
    }
    this.hadSession = false;
    const client = createClient(this.options.connect, {
      sessionTimeout: this.askedTimeoutMs(),
      // Wait at most this long (random) before another round over the servers, so a fail-over
      // to another ensemble member is quick.
      spinDelay: 200,
      retries: 0,
    });
    // Saved by the client and sent first on every (re)connection.
    if (this.options.auth) client.addAuthInfo('digest', Buffer.from(this.options.auth));
    client.on('state', this.stateListener);
    followConnectAttempts(client, {
      refused: () => {
        if (client !== this.client) return;
        for (const entry of [...this.refusals.values()]) {
          if (++entry.count >= this.hosts.length) entry.fail();
        }
      },
      connected: () => {
        for (const entry of this.refusals.values()) entry.count = 0;
      },
    });
    client.connect();
    this.handshake.start(client);
    return client;
  }

  /**
   * Ends the current client's session and lets the next call open one with the timeout asked
   * now. Everyone is told as after an expiry (the session is gone; watches are armed again on the
   * new one). Requests still waiting to be sent fail at once; those in flight may fail.
   */
  private replaceClient(): void {
    const old = this.client;
    if (!old) return;
    this.client = null;
    this.generation++;
    old.removeListener('state', this.stateListener);
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const send of waiting) send();
    void shutDown(old, this.hadSession ? 1000 : 0);
    this.emit('expired');
  }

  /** Warns once when the server granted a longer session than asked (its minSessionTimeout). */
  private checkGrant(client: Client): void {
    const asked = this.askedTimeoutMs();
    const granted = client.getSessionTimeout();
    if (granted > asked) {
      this.warnOnce(
        'CONCLAVE_ZOOKEEPER_SESSION_CLAMPED',
        `ZooKeeper granted a ${granted} ms session where ${asked} ms was asked (the server's minSessionTimeout is higher): ` +
          `a crashed leader is replaced only after up to ${granted} ms. Lower the server's tickTime and minSessionTimeout.`,
      );
    }
  }

  /** A process warning (stderr by default, `process.on('warning')` to route it), once per code. */
  private warnOnce(code: string, message: string): void {
    if (this.warned.has(code)) return;
    this.warned.add(code);
    process.emitWarning(message, { type: 'ConclaveWarning', code });
  }

  private onState(state: State): void {
    if (state === State.DISCONNECTED && this.client && !this.closed) this.handshake.start(this.client);
    if (state === State.DISCONNECTED && this.client) {
      // node-zookeeper-client keeps a partial frame of the closed socket and glues it to the
      // next connection's first bytes, then throws "Unknown code" from its socket handler
      // (alexguan/node-zookeeper-client#70). It is emitted before the client reconnects.
      const manager = managerOf(this.client);
      if (manager) manager.pendingBuffer = null;
    }
    if (this.closed) return;
    // AUTH_FAILED: the server refused the credentials and closes the connection; the client never
    // reconnects, so it ends like an expired session. The next call opens a new client, which
    // presents the credentials again (the server's configuration may have changed meanwhile).
    if (state === State.EXPIRED || state === State.AUTH_FAILED) {
      const old = this.client;
      this.generation++;
      if (this.options.mode === 'connect') {
        // A new client (a new session) is opened on next use.
        this.client = null;
        if (old) {
          old.removeListener('state', this.stateListener);
          // After AUTH_FAILED the server closes the connection itself; close() now would turn
          // the answer of the requests in flight from AUTH_FAILED into CONNECTION_LOSS.
          if (state === State.EXPIRED) void shutDown(old, 1000);
        }
      } else if (state === State.EXPIRED) {
        this.dead = true;
      } else {
        this.authRefused = true;
      }
      // Requests waiting for the old client fail fast (SESSION_EXPIRED, AUTH_FAILED: the client
      // answers every request so while in that state) instead of timing out.
      const waiting = [...this.waiters];
      this.waiters.clear();
      for (const send of waiting) send();
      this.emit('expired');
    } else if (state === State.SYNC_CONNECTED) {
      this.hadSession = true;
      if (this.options.mode === 'connect' && this.client) {
        relaxPing(this.client);
        this.checkGrant(this.client);
      }
      const waiting = [...this.waiters];
      this.waiters.clear();
      for (const send of waiting) send();
      this.emit('connected');
    }
  }

  private emit(event: SessionEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /**
   * node-zookeeper-client has no read timeout: on a silent connection (frozen server, network
   * partition) it stays "connected" and queues forever. When a request times out on a connected
   * client, drop its socket so that it reconnects, to another server if there is one. At most
   * once per request timeout.
   */
  private kick(handle: SessionHandle): void {
    const now = performance.now();
    if (now - this.lastKick < this.options.requestTimeoutMs) return;
    if (!this.isCurrent(handle) || handle.client.getState() !== State.SYNC_CONNECTED) return;
    this.lastKick = now;
    socketOf(handle.client)?.destroy();
  }
}
