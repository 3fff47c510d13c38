import { createServer, connect, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

/**
 * A TCP proxy with every network fault the fault runs need: `startTcpProxy`'s blackhole and cut,
 * plus latency. Route one candidate's backend through its own FaultProxy (all to the same server)
 * and that candidate alone can be slowed, partitioned or cut off while the others still reach it.
 *
 *   client → latency relay (this file) → TcpProxy (blackhole/cut) → server
 *
 * `delay(ms)` holds every chunk, both ways, for `ms` before passing it on, in order (a slow or
 * congested link); `delay(0)` ends it (chunks already held keep their release time).
 */
export interface FaultProxy {
  /** The port clients connect to (127.0.0.1). */
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Latency added to each direction, ms (0 = none). */
  delay(ms: number): void;
  /** No byte moves; sockets stay open (silent partition, as a frozen peer looks). */
  blackhole(): void;
  /** Every connection reset; new ones refused until `resume()`. */
  cut(): void;
  /** Ends blackhole/cut (not delay: call `delay(0)`). */
  resume(): void;
  /** Latency back to 0 and traffic flowing again. */
  heal(): void;
  /** Client connections open through this proxy now (which server a ZooKeeper client uses). */
  openConnections(): number;
  /** Closes both layers and every connection. Idempotent. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  targetPort: number;
  targetHost?: string;
}

interface Held {
  at: number;
  run: () => void;
}

/** A FIFO of chunks (and the end-of-stream) released in order, each not before its time. */
class DelayLine {
  private readonly queue: Held[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastAt = 0;

  push(delayMs: number, run: () => void): void {
    if (delayMs <= 0 && this.queue.length === 0) {
      run();
      return;
    }
    const at = Math.max(performance.now() + delayMs, this.lastAt);
    this.lastAt = at;
    this.queue.push({ at, run });
    this.arm();
  }

  clear(): void {
    this.queue.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = performance.now();
      while (this.queue.length > 0 && this.queue[0]!.at <= now + 0.5) this.queue.shift()!.run();
      this.arm();
    }, Math.max(0, this.queue[0]!.at - performance.now()));
  }
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const inner: TcpProxy = await startTcpProxy({ targetPort: options.targetPort, ...(options.targetHost ? { targetHost: options.targetHost } : {}) });
  let delayMs = 0;
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const lines = new Set<DelayLine>();

  const pipe = (from: Socket, to: Socket, line: DelayLine) => {
    from.on('data', (chunk: Buffer) => line.push(delayMs, () => !to.destroyed && to.write(chunk)));
    from.on('end', () => line.push(delayMs, () => !to.destroyed && to.end()));
  };

  const server: Server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect(inner.port, '127.0.0.1');
    upstream.setNoDelay(true);
    const up = new DelayLine();
    const down = new DelayLine();
    lines.add(up).add(down);
    sockets.add(client).add(upstream);
    clients.add(client);
    const destroy = () => {
      clients.delete(client);
      up.clear();
      down.clear();
      lines.delete(up);
      lines.delete(down);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // A reset on either side (cut, server crash) resets the other at once.
    client.on('error', destroy);
    upstream.on('error', destroy);
    client.on('close', destroy);
    upstream.on('close', destroy);
    pipe(client, upstream, up);
    pipe(upstream, client, down);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let closed: Promise<void> | null = null;
  return {
    port,
    address: `127.0.0.1:${port}`,
    delay(ms: number) {
      delayMs = Math.max(0, ms);
    },
    blackhole: () => inner.blackhole(),
    cut: () => inner.cut(),
    resume: () => inner.resume(),
    heal() {
      delayMs = 0;
      inner.resume();
    },
    openConnections: () => clients.size,
    close() {
      if (!closed) {
        closed = (async () => {
          for (const s of [...sockets]) s.destroy();
          for (const l of lines) l.clear();
          await Promise.all([new Promise<void>((done) => server.close(() => done())), inner.close()]);
        })();
      }
      return closed;
    },
  };
}
