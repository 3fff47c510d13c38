import { createClient, type Client } from 'node-zookeeper-client';

/**
 * Plain node-zookeeper-client sessions, for tests that look at or change the nodes behind the
 * backend's back. `closeAll()` (in afterEach) closes every client opened here.
 */
export class RawClients {
  private readonly clients: Client[] = [];

  constructor(private readonly connect: () => string) {}

  /** A connected client (session timeout 3 s), to the server given or the pool's. */
  open(connect = this.connect()): Promise<Client> {
    const client = createClient(connect, { sessionTimeout: 3000 });
    this.clients.push(client);
    return new Promise((resolve) => {
      client.once('connected', () => resolve(client));
      client.connect();
    });
  }

  closeAll(): void {
    for (const c of this.clients.splice(0)) c.close();
  }
}

/** A node-zookeeper-client call (last argument a callback) as a promise. */
export function zkCall<T>(fn: (cb: (err: unknown, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}
