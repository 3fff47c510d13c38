import type { Client } from 'node-zookeeper-client';
import { managerOf } from './zookeeper-client-util';

/** Share of the negotiated session timeout a connection may stay idle before the client pings. */
const PING_IDLE_SHARE = 0.45;

/**
 * node-zookeeper-client pings when its socket has been idle for a third of the session timeout
 * (socket.setTimeout, so any traffic resets it). With the core's defaults the renew interval is a
 * third of the lease too, so the idle timer and the renewal race and a leader sends a ping next to
 * almost every renewal (2 packets per renew interval). Raising the idle time to 45 % of the
 * session timeout lets the renewals be the keep-alive; an idle follower pings every 0.45 ×
 * timeout, which still leaves the server more than half the timeout of slack. Called on the
 * 'state' event of a (re)connection, which the client emits after it has set its own ping
 * timeout and before it arms the socket's timer with it, so the new value is the one armed.
 */
export function relaxPing(client: Client): void {
  const manager = managerOf(client);
  if (!manager || typeof manager.sessionTimeout !== 'number' || typeof manager.pingTimeout !== 'number') return;
  manager.pingTimeout = Math.max(manager.pingTimeout, Math.floor(manager.sessionTimeout * PING_IDLE_SHARE));
}
