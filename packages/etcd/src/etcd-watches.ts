import { op, type ElectionKeys, type EtcdStore } from './etcd-store';
import type { TxnBatches } from './etcd-txn-batches';
import type { WatchHandle, WatchStream } from './etcd-watch-stream';

/** One candidate's subscription: the key it watches now, and whether that watch is up. */
interface Subscription {
  election: string;
  instanceId: string;
  onChange: () => void;
  /** The watch on the key this candidate waits for, confirmed or not yet; null while there is none. */
  watch: WatchHandle | null;
  /** The queue is being listed to pick the key to watch (a resolve in progress). */
  listing: boolean;
  /** The key watched (predecessor, or the fence for the head). */
  target: string | null;
  /** Bumped on every re-resolve, so a late watcher of an older resolve is cancelled. */
  generation: number;
  /** Create revision of the candidate's key when the watch was chosen (0: not known). */
  revision: number;
  closed: boolean;
}

/**
 * `watch()` for etcd's recipe: a candidate watches the key of its predecessor (the candidate key
 * created just before its own), so a departure wakes only its successor; the head of the queue
 * watches the fence, which an admin's force or clear leaves. The key to watch comes from a read (a
 * listing of the queue, or the campaign's own read when that showed it); a change of that key
 * between the read and the watch's start is found by reading it again (see `lookBetween`). After every event the candidate looks again (a campaign),
 * and its campaign picks the key to watch next.
 *
 * A watch misses nothing while it stands (etcd sends every event after its start revision), and
 * when it goes away (an error, a broken stream) the candidate is woken to look again: so the
 * backend declares push `'reliable'`, and a follower with a watch sends nothing but its lease's
 * keep-alives. While a candidate has no watch, `isWatching` is false and the core polls.
 */
export class PredecessorWatches {
  private readonly subscriptions = new Map<string, Set<Subscription>>();
  private closed = false;

  constructor(
    private readonly stream: WatchStream,
    private readonly store: EtcdStore,
    /** Sends the listings of one turn together. */
    private readonly listings: TxnBatches,
    private readonly keys: ElectionKeys,
    /** The create revision of the candidate's key as this process knows it; null before its first campaign. */
    private readonly revisionOf: (election: string, instanceId: string) => number | null,
  ) {}

  watch(election: string, instanceId: string, onChange: () => void): () => void {
    const sub: Subscription = { election, instanceId, onChange, watch: null, listing: false, target: null, generation: 0, revision: 0, closed: false };
    const id = this.idOf(election, instanceId);
    let set = this.subscriptions.get(id);
    if (!set) this.subscriptions.set(id, (set = new Set()));
    set.add(sub);
    // Before its first campaign the candidate has no key, and so no predecessor yet: its campaign
    // (`moved`) sets up the watch, once, instead of a watch on the head replaced at once.
    const revision = this.revisionOf(election, instanceId);
    if (revision !== null) {
      sub.revision = revision;
      this.resolve(sub);
    }
    return () => {
      if (sub.closed) return;
      sub.closed = true;
      set!.delete(sub);
      if (set!.size === 0 && this.subscriptions.get(id) === set) this.subscriptions.delete(id);
      void this.drop(sub);
    };
  }

  /**
   * A watch up, or sent and not yet confirmed: etcd sends every event from its start revision
   * once it is created, and a watch that fails before wakes its candidate. (Under load, creating
   * thousands of watches takes seconds; polling meanwhile would only slow the server down more.)
   */
  isWatching(election: string, instanceId: string): boolean {
    const set = this.subscriptions.get(this.idOf(election, instanceId));
    if (!set) return false;
    for (const sub of set) if (sub.watch !== null) return true;
    return false;
  }

  /**
   * The candidate campaigned and its key has create revision `revision`. `seen`: the key to watch
   * as the campaign's own read showed it (the fence when its key heads the queue, the head when
   * its key comes next) and that read's revision, so the watch starts there without listing the
   * queue. A key created anew may have another predecessor: look again. The same key keeps its
   * predecessor until that one is deleted, which the watch reports; only a subscription without
   * a watch (nor one being set up) looks again then.
   */
  moved(election: string, instanceId: string, revision: number, seen?: SeenTarget): void {
    const set = this.subscriptions.get(this.idOf(election, instanceId));
    if (!set) return;
    for (const sub of set) {
      if (sub.revision === revision && (sub.watch !== null || sub.listing)) continue;
      sub.revision = revision;
      this.resolve(sub, seen);
    }
  }

  /** Something changed for everyone (a lease lost): wake and look again. */
  notifyAll(): void {
    for (const set of this.subscriptions.values()) {
      for (const sub of set) {
        this.resolve(sub);
        sub.onChange();
      }
    }
  }

  /** Ends every watch; no candidate is woken. */
  close(): void {
    this.closed = true;
    const all = [...this.subscriptions.values()].flatMap((s) => [...s]);
    this.subscriptions.clear();
    for (const sub of all) {
      sub.closed = true;
      this.drop(sub);
    }
  }

  private idOf(election: string, instanceId: string): string {
    return `${election}\n${instanceId}`;
  }

  /** Ends the subscription's watch (confirmed or still pending), and any listing for one. */
  private drop(sub: Subscription): void {
    sub.generation++;
    sub.watch?.cancel();
    sub.watch = null;
    sub.listing = false;
    sub.target = null;
  }

  /**
   * Lists the queue (unless `seen` tells), picks the key to watch and starts watching it from the
   * revision it was read at. On failure the candidate has no watch (`isWatching` false) and the
   * core polls; the next campaign (`moved`) tries again.
   */
  private resolve(sub: Subscription, seen?: SeenTarget): void {
    if (sub.closed || this.closed) return;
    this.drop(sub);
    const generation = sub.generation;
    const current = () => !sub.closed && sub.generation === generation;
    const own = this.keys.candidate(sub.election, sub.instanceId);
    const fence = this.keys.fence(sub.election);
    sub.listing = seen === undefined;
    void (async () => {
      let read: SeenTarget;
      if (seen) {
        read = seen;
      } else {
        const listing = await this.listings
          .txn(this.store, sub.election, [], [op.keys(this.keys.candidates(sub.election)), op.get(fence)], [])
          .finally(() => {
            if (current()) sub.listing = false;
          });
        if (!current()) return;
        const keys = (listing.responses[0]?.response_range?.kvs ?? []).map((kv) => kv.key.toString());
        const at = keys.indexOf(own);
        // Not in the queue: wait for the head (the leader) to go. Head: wait for a fence to come or go.
        const target = at < 0 ? keys[0] : at === 0 ? fence : keys[at - 1]!;
        if (target === undefined) return;
        const existed = at === 0 ? (listing.responses[1]?.response_range?.kvs.length ?? 0) > 0 : true;
        read = { target, head: at === 0, existed, revision: String(listing.header.revision) };
      }
      // The candidate looks again after any change it waits for, and when the watch is lost (the
      // server ended it, or its stream broke: a change may fall between the two); its campaign
      // (`moved`) picks the next key to watch, after its own read. When many keys go at once (a
      // process that led many elections died), the campaigns' reads are not queued behind as many
      // listings.
      const wake = () => {
        if (!current()) return;
        this.drop(sub);
        sub.onChange();
      };
      sub.target = read.target;
      sub.watch = this.stream.watch(read.target, {
        created: (revision) => {
          if (revision !== read.revision) this.lookBetween(sub, read, current, wake);
        },
        changed: (kind) => {
          if (kind === 'delete' || read.head) wake();
        },
        lost: wake,
      });
    })().catch(() => {
      // No watch: the core polls.
      if (current()) this.drop(sub);
    });
  }

  /**
   * A watch starts at the revision it is created at, later than the read that chose its key: a
   * change of that key in between is found by reading the key again, and wakes the candidate.
   * (A watch from the read's revision would miss nothing, but etcd catches a watch from a past
   * revision up in a background loop, a few hundred at a time, each round reading every change
   * since the oldest: with thousands of candidates watching anew at once, that loop took the
   * server's whole CPU and delayed the watches' events by seconds.)
   */
  private lookBetween(sub: Subscription, read: SeenTarget, current: () => boolean, wake: () => void): void {
    void this.listings.txn(this.store, sub.election, [], [op.get(read.target)], []).then(
      (res) => {
        if (!current()) return;
        const now = res.responses[0]?.response_range?.kvs[0];
        if (now ? !read.existed || Number(now.mod_revision) > Number(read.revision) : read.existed) wake();
      },
      () => {
        // Not known whether the key changed: no watch, the core polls.
        if (current()) this.drop(sub);
      },
    );
  }
}

/** The key a candidate waits for, as a read showed it (its campaign's, or a listing of the queue). */
export interface SeenTarget {
  target: string;
  /** The candidate's key headed the queue (its target is the fence: a put wakes it too). */
  head: boolean;
  /** Whether the target was there at the read. */
  existed: boolean;
  /** The revision of the read. */
  revision: string;
}
