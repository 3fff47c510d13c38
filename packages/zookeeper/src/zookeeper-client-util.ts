import type { Socket } from 'node:net';
import { State, type Client } from 'node-zookeeper-client';

// Helpers on a bare node-zookeeper-client client, shared by the session and the chroot creation.

/** The ZooKeeper error code of a client error, if it is one. */
export function zkCode(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null && typeof (err as { getCode?: unknown }).getCode === 'function') {
    const code = (err as { getCode(): unknown }).getCode();
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}

// The client's connection manager is not public. It is only touched to end a connection the
// client itself would never give up on (kick, shutDown, the handshake watch), to relax its pings
// and to work around a known bug (the session's onState).
export interface ConnectionManagerInternals {
  socket?: Socket;
  pendingBuffer?: Buffer | null;
  connectTimeout?: number;
  sessionTimeout?: number;
  pingTimeout?: number;
}

export function managerOf(client: Client): ConnectionManagerInternals | undefined {
  const manager = (client as unknown as { connectionManager?: ConnectionManagerInternals }).connectionManager;
  return typeof manager === 'object' && manager !== null ? manager : undefined;
}

export function socketOf(client: Client): Socket | undefined {
  return managerOf(client)?.socket;
}

/**
 * Closes a client: asks the server to end the session (its ephemeral nodes go at once), and
 * destroys the socket if the server does not answer within `graceMs`, so no socket or timer
 * outlives close().
 */
export function shutDown(client: Client, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      client.removeListener('state', onState);
      socketOf(client)?.destroy();
      resolve();
    };
    const onState = (state: State) => {
      if (state === State.DISCONNECTED) finish();
    };
    const timer = setTimeout(finish, graceMs);
    client.on('state', onState);
    try {
      client.close();
    } catch {
      // close() only throws for an unknown internal state; the socket is destroyed below anyway.
      finish();
    }
  });
}
