import { createServer, connect, type Socket } from 'node:net';
import { nowMs, onCleanup } from './util';

/**
 * A forwarding TCP proxy in front of the server for one candidate process, counting the bursts
 * of bytes that process sends (one `data` event on loopback ≈ one request or one pipelined
 * batch ≈ one round trip). It tells per process what the server's global counters cannot.
 */
export interface CountingProxy {
  port: number;
  /** Client→server bursts so far (data events less than `BURST_GAP_MS` apart count once). */
  sends(): number;
  /** Monotonic ms of each burst. */
  readonly times: number[];
  close(): Promise<void>;
}

/** Data events closer than this are one burst (a pipelined batch split by TCP). */
export const BURST_GAP_MS = 1;

export function startCountingProxy(targetPort: number): Promise<CountingProxy> {
  const times: number[] = [];
  let last = -Infinity;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect(targetPort, '127.0.0.1');
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      const t = nowMs();
      if (t - last > BURST_GAP_MS) times.push(t);
      last = t;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      let closed: Promise<void> | null = null;
      const close = () => {
        closed ??= new Promise<void>((done) => {
          for (const s of sockets) s.destroy();
          server.close(() => done());
        });
        return closed;
      };
      const remove = onCleanup(close);
      resolve({
        port,
        sends: () => times.length,
        times,
        close: () => {
          remove();
          return close();
        },
      });
    });
  });
}
