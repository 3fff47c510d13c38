import { createServer, connect, type Socket } from 'node:net';
import { nowMs, onCleanup } from './util';

/**
 * A forwarding TCP proxy in front of the server for one candidate process, counting the bursts
 * of bytes that process sends (one `data` event on loopback ≈ one request or one pipelined
 * batch ≈ one round trip). It tells per process what the server's global counters cannot.
 *
 * On HTTP/2 (gRPC: etcd), a burst that carries only frames the server asked for (PING and
 * SETTINGS acknowledgements) or flow-control credit (WINDOW_UPDATE) is no request: the process
 * waits on nothing. Such bursts are recorded apart (`controlTimes`), not as round trips. (etcd's
 * gRPC server pings after data it receives, to size its windows, and the client must answer.)
 */
export interface CountingProxy {
  port: number;
  /** Client→server bursts so far (data events less than `BURST_GAP_MS` apart count once). */
  sends(): number;
  /** Monotonic ms of each burst. */
  readonly times: number[];
  /** Monotonic ms of each HTTP/2 burst of acknowledgements and flow control only (not in `times`). */
  readonly controlTimes: number[];
  close(): Promise<void>;
}

/** Data events closer than this are one burst (a pipelined batch split by TCP). */
export const BURST_GAP_MS = 1;

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const FRAME_HEADER = 9;
const SETTINGS = 0x4;
const PING = 0x6;
const WINDOW_UPDATE = 0x8;
const ACK = 0x1;

/**
 * Tells, chunk by chunk, whether a client's bytes carry a request. Anything but HTTP/2 always
 * does; on HTTP/2, frames are read across chunks and only acknowledgements and WINDOW_UPDATE
 * count as control.
 */
class RequestScanner {
  private http2: boolean | null = null;
  private head = Buffer.alloc(0);
  /** Payload bytes of the current frame still to come, and whether that frame is a request. */
  private payloadLeft = 0;
  private payloadIsRequest = false;

  carriesRequest(chunk: Buffer): boolean {
    if (this.http2 === null) {
      const seen = Buffer.concat([this.head, chunk]);
      const n = Math.min(seen.length, HTTP2_PREFACE.length);
      if (!seen.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n))) this.http2 = false;
      else if (seen.length < HTTP2_PREFACE.length) {
        this.head = seen;
        return true;
      } else {
        this.http2 = true;
        this.head = Buffer.alloc(0);
        this.frames(seen.subarray(HTTP2_PREFACE.length));
        return true;
      }
    }
    return this.http2 ? this.frames(chunk) : true;
  }

  private frames(chunk: Buffer): boolean {
    let request = false;
    let at = 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const take = Math.min(this.payloadLeft, chunk.length - at);
        this.payloadLeft -= take;
        at += take;
        request ||= this.payloadIsRequest;
        continue;
      }
      const need = FRAME_HEADER - this.head.length;
      this.head = Buffer.concat([this.head, chunk.subarray(at, at + need)]);
      at += Math.min(need, chunk.length - at);
      if (this.head.length < FRAME_HEADER) break;
      const length = this.head.readUIntBE(0, 3);
      const type = this.head[3]!;
      const flags = this.head[4]!;
      this.head = Buffer.alloc(0);
      const control = ((type === PING || type === SETTINGS) && (flags & ACK) !== 0) || type === WINDOW_UPDATE;
      this.payloadLeft = length;
      this.payloadIsRequest = !control;
      request ||= !control;
    }
    return request;
  }
}

export function startCountingProxy(targetPort: number): Promise<CountingProxy> {
  const times: number[] = [];
  let last = -Infinity;
  /** The burst now going on: its start, and whether it was counted (it carried a request). */
  let burst = { startedAt: -Infinity, counted: false };
  const controlTimes: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect(targetPort, '127.0.0.1');
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    const scanner = new RequestScanner();
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      const t = nowMs();
      if (t - last > BURST_GAP_MS) {
        if (burst.startedAt > -Infinity && !burst.counted) controlTimes.push(burst.startedAt);
        burst = { startedAt: t, counted: false };
      }
      last = t;
      if (scanner.carriesRequest(chunk) && !burst.counted) {
        burst.counted = true;
        times.push(burst.startedAt);
      }
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
        controlTimes,
        close: () => {
          remove();
          return close();
        },
      });
    });
  });
}
