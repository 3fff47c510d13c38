import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy for fault injection: route one client (or one backend) through it, then freeze or
 * cut its traffic without touching the server or the other clients.
 *
 * Modes:
 * - forwarding (initial, and after `resume()`): bytes flow both ways.
 * - `blackhole()`: no byte moves in either direction and every socket stays open — a frozen
 *   process or a silent network partition as both ends see it. Bytes already sent wait (in socket
 *   buffers) and are delivered on `resume()`, as TCP would after a healed partition; a side that
 *   closed meanwhile is seen closed only then. New connections are accepted and held.
 * - `cut()`: every open connection is destroyed at once (both sides see a reset/close), and new
 *   connections are refused (accepted then destroyed) until `resume()`.
 */
export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Stops moving bytes; keeps sockets open. */
  blackhole(): void;
  /** Destroys every open connection and refuses new ones until `resume()`. */
  cut(): void;
  /** Back to forwarding; held bytes and connections flow again. */
  resume(): void;
  /**
   * Points the proxy at another server (a managed database's endpoint moving to a promoted
   * replica): new connections reach `targetPort`. Open connections are reset, as when the old
   * server went away, unless `keepOpen` (they stay with the old server: a client the switch
   * does not reach).
   */
  retarget(targetPort: number, options?: { keepOpen?: boolean }): void;
  /** The port new connections are forwarded to. */
  readonly targetPort: number;
  /** Destroys every connection and stops listening. Idempotent. */
  close(): Promise<void>;
}

export interface TcpProxyOptions {
  /** Port of the real server. */
  targetPort: number;
  /** Host of the real server. Default 127.0.0.1. */
  targetHost?: string;
  /** Port to listen on. Default: a free port chosen by the OS. */
  port?: number;
}

type Mode = 'forward' | 'blackhole' | 'cut';

interface Pair {
  client: Socket;
  upstream: Socket | null;
}

export function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const targetHost = options.targetHost ?? '127.0.0.1';
  let targetPort = options.targetPort;
  let mode: Mode = 'forward';
  const pairs = new Set<Pair>();

  /** Pairs one side of which closed while blackholed: the other side learns it on resume(). */
  const closedWhileHeld = new Set<Pair>();
  /** Half-closes (FIN) seen during a blackhole, passed on at resume() after the held bytes. */
  let endedWhileHeld: Array<() => void> = [];

  const destroyPair = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
    closedWhileHeld.delete(pair);
  };

  // A side that closes (or resets) during a blackhole must not be seen by the other side until
  // traffic flows again: a frozen peer notices nothing.
  const onSideClosed = (pair: Pair) => {
    if (mode === 'blackhole') closedWhileHeld.add(pair);
    else destroyPair(pair);
  };

  // Moves bytes from `from` to `to` while forwarding; pausing `from` is how a blackhole holds them.
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.destroyed && !to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (mode === 'forward') from.resume();
    });
    // Even a paused socket reports the peer's FIN; during a blackhole the other side must not see
    // it until traffic flows again.
    from.on('end', () => {
      if (mode === 'blackhole') endedWhileHeld.push(() => to.end());
      else to.end();
    });
  };

  const openUpstream = (pair: Pair) => {
    const upstream = connect(targetPort, targetHost);
    upstream.setNoDelay(true);
    pair.upstream = upstream;
    upstream.on('error', () => onSideClosed(pair));
    upstream.on('close', () => onSideClosed(pair));
    relay(pair.client, upstream);
    relay(upstream, pair.client);
    if (mode !== 'forward') upstream.pause();
  };

  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.destroy();
      return;
    }
    client.setNoDelay(true);
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    client.on('error', () => onSideClosed(pair));
    client.on('close', () => onSideClosed(pair));
    if (mode === 'blackhole') {
      // Hold the connection; reach the server only once traffic flows again.
      client.pause();
      return;
    }
    openUpstream(pair);
  });

  return new Promise<TcpProxy>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      let closed: Promise<void> | null = null;
      resolve({
        port,
        address: `127.0.0.1:${port}`,
        blackhole() {
          mode = 'blackhole';
          for (const pair of pairs) {
            pair.client.pause();
            pair.upstream?.pause();
          }
        },
        cut() {
          mode = 'cut';
          for (const pair of [...pairs]) destroyPair(pair);
        },
        get targetPort() {
          return targetPort;
        },
        retarget(port, { keepOpen = false } = {}) {
          targetPort = port;
          if (!keepOpen) for (const pair of [...pairs]) destroyPair(pair);
        },
        resume() {
          mode = 'forward';
          for (const pair of [...closedWhileHeld]) destroyPair(pair);
          for (const pair of [...pairs]) {
            if (!pair.upstream) openUpstream(pair);
            pair.client.resume();
            pair.upstream?.resume();
          }
          const ends = endedWhileHeld;
          endedWhileHeld = [];
          // After the held bytes have been written (they flow in this turn).
          setImmediate(() => ends.forEach((end) => end()));
        },
        close() {
          if (!closed) {
            mode = 'cut';
            for (const pair of [...pairs]) destroyPair(pair);
            closed = new Promise<void>((done) => server.close(() => done()));
          }
          return closed;
        },
      });
    });
  });
}
