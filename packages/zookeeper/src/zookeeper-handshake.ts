import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';
import { State, type Client } from 'node-zookeeper-client';
import { managerOf } from './zookeeper-client-util';

/** How often a connection attempt without a session is looked at (see `HandshakeWatch`), ms. */
const HANDSHAKE_POLL_MS = 100;

/**
 * node-zookeeper-client bounds a connection attempt only until the TCP connection is made; then
 * it waits for the server's answer to its ConnectRequest with no deadline. ZooKeeper 3.8 opens
 * its client port before it has loaded its database; a handshake that arrives then is refused
 * ("not running"), but closing the socket fails (a NullPointerException on the database not
 * loaded yet), so the connection stays open and silent until the server drops sessionless
 * connections, ten seconds later. Meanwhile the client is "connecting", every candidate of
 * this backend has no session, and a leader's session expires on the server. Like ZooKeeper's
 * own client, give the whole attempt, handshake included, the client's connect timeout
 * (session timeout / number of servers): a socket open that long without a session is
 * destroyed, and the client tries again (the next server).
 * Runs while the client has no session; stops at SYNC_CONNECTED, expiry or close.
 */
export class HandshakeWatch {
  private timer: NodeJS.Timeout | null = null;
  private client: Client | null = null;

  constructor(
    /** Whether `client` is still the session's client (not replaced, not closed). */
    private readonly isLive: (client: Client) => boolean,
    /** The limit of an attempt when the client does not tell its connect timeout, ms. */
    private readonly fallbackMs: number,
  ) {}

  /** Watches `client`'s connection attempts until it has a session (already watched: no-op). */
  start(client: Client): void {
    if (this.timer && this.client === client) return;
    this.stop();
    this.client = client;
    let socket: Socket | undefined;
    let openSince = 0;
    const poll = () => {
      const state = client.getState();
      if (!this.isLive(client) || state === State.SYNC_CONNECTED || state === State.EXPIRED) {
        this.stop();
        return;
      }
      const manager = managerOf(client);
      const current = manager?.socket;
      const now = performance.now();
      if (!current || current.destroyed || current.connecting) {
        socket = undefined;
        return;
      }
      if (current !== socket) {
        socket = current;
        openSince = now;
        return;
      }
      const limit = typeof manager?.connectTimeout === 'number' && manager.connectTimeout > 0 ? manager.connectTimeout : this.fallbackMs;
      if (now - openSince >= limit) {
        socket = undefined;
        current.destroy();
      }
    };
    this.timer = setInterval(poll, HANDSHAKE_POLL_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.client = null;
  }
}
