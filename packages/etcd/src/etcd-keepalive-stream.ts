import { ConclaveError } from '@conclave/core';
import type { IDuplexStream, ILeaseKeepAliveRequest, ILeaseKeepAliveResponse, LeaseClient } from 'etcd3/lib/rpc';
import { etcdErrorCode } from './etcd-errors';
import { endStream } from './etcd-grpc-stream';
import { requireLeader } from './etcd-require-leader';

const KIND = 'etcd';

type Stream = IDuplexStream<ILeaseKeepAliveRequest, ILeaseKeepAliveResponse>;

interface Waiter {
  resolve: (ttlSec: number) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Lease keep-alives of a backend on one long-lived gRPC stream: a keep-alive is one message on a
 * stream already open. (A stream per keep-alive costs an opening, the message and a closing, and
 * its first write waits for the opening.) The keep-alives asked for in one event-loop turn are
 * written at the end of it (`setImmediate`), where the turn's batched reads are sent too
 * (TickBatcher), so that a renewal's keep-alive and read leave together: one round trip.
 *
 * The server answers every keep-alive on the stream, in order, with the lease's id; answers are
 * matched to the oldest keep-alive of that id still waiting. A keep-alive unanswered within
 * `stallMs` means the stream is stuck (a member gone silent): the stream is dropped and every
 * keep-alive on it fails, so the next one opens a new stream, maybe on another member.
 */
export class KeepAliveStream {
  private stream: Promise<Stream> | null = null;
  private readonly waiting = new Map<string, Waiter[]>();
  /** Lease ids to write at the end of this turn, in order. */
  private toWrite: string[] = [];
  private closed = false;

  constructor(
    private readonly lease: LeaseClient,
    /** Longest wait for an answer before the stream counts as stuck, ms. */
    private readonly stallMs: number,
  ) {}

  /** Keeps lease `id` alive once; resolves with the TTL the server answered (≤ 0: the lease is gone). */
  keepAlive(id: string, stallMs = this.stallMs): Promise<number> {
    if (this.closed) return Promise.reject(new ConclaveError('CLOSED', 'the backend was closed', { backend: KIND }));
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        // The stream is stuck: a new one for the next keep-alive; every one waiting fails.
        const err = new ConclaveError('BACKEND_UNAVAILABLE', `lease keep-alive got no answer within ${stallMs} ms`, { backend: KIND });
        if (this.stream) this.drop(this.stream, err);
        this.fail(waiter, err);
      }, stallMs);
      const waiter: Waiter = { resolve, reject, timer };
      const queue = this.waiting.get(id);
      if (queue) queue.push(waiter);
      else this.waiting.set(id, [waiter]);
      if (this.toWrite.push(id) === 1) setImmediate(() => this.flush());
    });
  }

  /** Writes the turn's keep-alives once the stream they wait on is open. */
  private flush(): void {
    const ids = this.toWrite;
    this.toWrite = [];
    if (this.closed) return; // close() failed the waiters
    const opening = this.stream ?? this.open();
    void opening.then(
      (stream) => {
        if (this.stream !== opening) return; // dropped meanwhile: its waiters failed with it
        for (const id of ids) stream.write({ ID: id });
      },
      () => undefined, // open() fails the waiters
    );
  }

  /** Ends the stream; keep-alives still waiting fail with CLOSED. */
  close(): void {
    this.closed = true;
    const err = new ConclaveError('CLOSED', 'the backend was closed', { backend: KIND });
    if (this.stream) this.drop(this.stream, err);
    this.failAll(err); // those not written yet
  }

  private open(): Promise<Stream> {
    const opening = this.lease.leaseKeepAlive(requireLeader()).then((stream) => {
      stream.on('error', () => undefined); // ended by us: the cancellation's error is expected
      if (this.stream !== opening) {
        endStream(stream);
        return stream;
      }
      stream.on('data', (res: ILeaseKeepAliveResponse) => this.answered(String(res.ID), Number(res.TTL)));
      stream.on('error', (err: unknown) => this.drop(opening, streamFailed('lease keep-alive stream failed', err)));
      stream.on('end', () => this.drop(opening, new ConclaveError('BACKEND_UNAVAILABLE', 'lease keep-alive stream ended', { backend: KIND })));
      return stream;
    });
    this.stream = opening;
    opening.catch((err: unknown) => this.drop(opening, streamFailed('lease keep-alive stream could not open', err)));
    return opening;
  }

  /** Fails one keep-alive still waiting (its queue may have been failed whole already). */
  private fail(waiter: Waiter, err: ConclaveError): void {
    for (const [id, queue] of this.waiting) {
      const at = queue.indexOf(waiter);
      if (at < 0) continue;
      queue.splice(at, 1);
      if (queue.length === 0) this.waiting.delete(id);
      clearTimeout(waiter.timer);
      waiter.reject(err);
      return;
    }
  }

  private answered(id: string, ttlSec: number): void {
    const queue = this.waiting.get(id);
    const waiter = queue?.shift();
    if (!waiter) return; // answered after it was given up on
    if (queue!.length === 0) this.waiting.delete(id);
    clearTimeout(waiter.timer);
    waiter.resolve(ttlSec);
  }

  /** Forgets `stream` (if still the current one) and fails every keep-alive waiting on it. */
  private drop(stream: Promise<Stream>, err: ConclaveError): void {
    if (this.stream !== stream) return;
    this.stream = null;
    this.failAll(err);
    stream.then(endStream, () => undefined);
  }

  private failAll(err: ConclaveError): void {
    const waiters = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

function streamFailed(what: string, err: unknown): ConclaveError {
  if (err instanceof ConclaveError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConclaveError(etcdErrorCode(err), `etcd ${what}: ${message}`, { backend: KIND, cause: err });
}
