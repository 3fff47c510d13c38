import type { Client } from 'node-zookeeper-client';

/**
 * A request that could not be sent because every server of the connect string refused the TCP
 * connection (nothing listening). The backend turns it into `BACKEND_UNAVAILABLE` named after
 * the call that was made.
 */
export class ConnectionRefusedError extends Error {
  constructor(readonly hosts: string) {
    super(`cannot connect to ZooKeeper at ${hosts} (connection refused)`);
    this.name = 'ConnectionRefusedError';
  }
}

/** The servers of a connect string, as messages show them (the chroot left out). */
export function hostsOf(connect: string): string[] {
  const slash = connect.indexOf('/');
  return (slash === -1 ? connect : connect.slice(0, slash)).split(',');
}

interface ManagerHooks {
  onSocketError?: (this: unknown, error: unknown) => void;
  onSocketConnected?: (this: unknown) => void;
}

/**
 * Reports each refused connection attempt, and each TCP connection made, of `client`.
 * node-zookeeper-client swallows socket errors and simply tries the next server, so a refused
 * server looks the same as a slow one from outside. Its connection manager binds these two
 * handlers to every new socket, so wrapping them on the instance sees every attempt.
 */
export function followConnectAttempts(client: Client, on: { refused: () => void; connected: () => void }): void {
  const manager = (client as unknown as { connectionManager?: ManagerHooks }).connectionManager;
  if (typeof manager !== 'object' || manager === null) return;
  const { onSocketError, onSocketConnected } = manager;
  if (typeof onSocketError !== 'function' || typeof onSocketConnected !== 'function') return;
  manager.onSocketError = function (this: unknown, error: unknown) {
    if ((error as { code?: unknown } | null)?.code === 'ECONNREFUSED') on.refused();
    return onSocketError.call(this, error);
  };
  manager.onSocketConnected = function (this: unknown) {
    on.connected();
    return onSocketConnected.call(this);
  };
}
