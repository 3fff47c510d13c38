import type { IDuplexStream, IWatchRequest, IWatchResponse, WatchClient } from 'etcd3/lib/rpc';
import { endStream } from './etcd-grpc-stream';
import { requireLeader } from './etcd-require-leader';

type Stream = IDuplexStream<IWatchRequest, IWatchResponse>;

/** What a watch reports. Each is called only while the watch stands; `lost` at most once. */
export interface WatchHandlers {
  /** The server confirmed the watch, at `revision`: it sends every event after that one. */
  created(revision: string): void;
  /** A key watched was put or deleted, at `revision`; `created`: the put made the key (its first version). */
  changed(kind: 'put' | 'delete', key: string, revision: number, created: boolean): void;
  /** The watch ended without being cancelled: refused, cancelled by the server, or its stream broke. */
  lost(): void;
}

/** One watch of the stream: cancel it to stop its reports. */
export interface WatchHandle {
  cancel(): void;
}

/**
 * The watches of a backend on one gRPC watch stream, each created with an id of our own (etcd
 * 3.4 and later take the client's `watch_id`): a creation is written at once, without waiting
 * for the server to confirm the one before, and every answer finds its watch by id. (The etcd3
 * package creates one watch per round trip and looks watches up in a list: with thousands of
 * candidates waiting at once, their watches took minutes to set up.)
 *
 * Nothing is resumed: when the stream breaks every watch on it is lost, and its owner looks
 * again and watches anew. The next watch opens a new stream. The stream requires its member to
 * have a Raft leader (see `requireLeader`): one on a member cut off from the others is ended, not
 * left silent.
 */
export class WatchStream {
  private stream: Promise<Stream> | null = null;
  private readonly watches = new Map<string, WatchHandlers>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly client: WatchClient) {}

  /**
   * Watches `key` (with `rangeEnd`, the keys from `key` to it) from now on. (A watch from a past
   * revision is one etcd catches up on in a background loop, a few hundred at a time: with
   * thousands, its events come seconds late.)
   */
  watch(key: string, handlers: WatchHandlers, rangeEnd?: Buffer): WatchHandle {
    const id = String(this.nextId++);
    if (this.closed) {
      queueMicrotask(() => handlers.lost());
      return { cancel: () => undefined };
    }
    this.watches.set(id, handlers);
    this.write({ create_request: { key: Buffer.from(key), ...(rangeEnd ? { range_end: rangeEnd } : {}), watch_id: id } });
    return {
      cancel: () => {
        if (this.watches.delete(id)) this.write({ cancel_request: { watch_id: id } });
      },
    };
  }

  /** Ends the stream; its watches report nothing more. */
  close(): void {
    this.closed = true;
    this.watches.clear();
    const stream = this.stream;
    this.stream = null;
    stream?.then(endStream, () => undefined);
  }

  private write(request: IWatchRequest): void {
    const opening = this.stream ?? this.open();
    void opening.then(
      (stream) => {
        if (this.stream === opening) stream.write(request);
      },
      () => undefined, // open() reports the loss
    );
  }

  private open(): Promise<Stream> {
    const opening = this.client.watch(requireLeader()).then((stream) => {
      stream.on('error', () => undefined); // ended by us: the cancellation's error is expected
      if (this.stream !== opening) {
        endStream(stream);
        return stream;
      }
      stream.on('data', (res: IWatchResponse) => this.answered(res));
      stream.on('error', () => this.broke(opening));
      stream.on('end', () => this.broke(opening));
      return stream;
    });
    this.stream = opening;
    opening.catch(() => this.broke(opening));
    return opening;
  }

  private answered(res: IWatchResponse): void {
    const id = String(res.watch_id);
    const handlers = this.watches.get(id);
    if (!handlers) return; // cancelled by us, or an answer to a cancellation
    if (res.canceled) {
      this.watches.delete(id);
      handlers.lost();
      return;
    }
    if (res.created) handlers.created(String(res.header.revision));
    for (const event of res.events ?? []) {
      if (!this.watches.has(id)) return; // cancelled by a handler
      const kind = event.type === 'Delete' ? 'delete' : 'put';
      handlers.changed(kind, event.kv.key.toString(), Number(event.kv.mod_revision), kind === 'put' && String(event.kv.version) === '1');
    }
  }

  /** The stream `broken` failed or ended: every watch on it is lost. */
  private broke(broken: Promise<Stream>): void {
    if (this.stream !== broken) return;
    this.stream = null;
    const lost = [...this.watches.values()];
    this.watches.clear();
    broken.then(endStream, () => undefined);
    for (const handlers of lost) handlers.lost();
  }
}
