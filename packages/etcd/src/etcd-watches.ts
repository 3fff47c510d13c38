import { op, type ElectionKeys, type EtcdStore } from './etcd-store';
import type { TxnBatches } from './etcd-txn-batches';
import { ElectionWatch, type SeenTarget, type Wait } from './etcd-election-watch';
import type { WatchStream } from './etcd-watch-stream';

export type { SeenTarget } from './etcd-election-watch';

/** One candidate's subscription: the key it waits for now, if any. */
interface Subscription {
  election: string;
  instanceId: string;
  onChange: () => void;
  /** What it waits for, on its election's watch; null while it has nothing to wait for yet. */
  wait: Wait | null;
  /** The queue is being listed to pick the key to wait for (a resolve in progress). */
  listing: boolean;
  /** Bumped on every re-resolve, so a late listing of an older resolve is dropped. */
  generation: number;
  /** Create revision of the candidate's key when the key to wait for was chosen (0: not known). */
  revision: number;
  closed: boolean;
}

/** This process's candidates in one election, and the watch they share while there are any. */
interface Election {
  subscriptions: Set<Subscription>;
  watch: ElectionWatch | null;
}

/**
 * `watch()` for etcd's recipe: a candidate waits for the key of its predecessor (the candidate
 * key created just before its own), so a departure wakes only its successor; the head of the
 * queue waits for the fence, which an admin's force or clear leaves. The key to wait for comes
 * from a read (a listing of the queue, or the campaign's own read when that showed it); the
 * candidates of one election in this process share one watch on the election's keys
 * (`ElectionWatch`), which also finds a change between that read and the wait. After every change
 * it waits for, the candidate looks again (a campaign), and its campaign picks the key to wait for next.
 *
 * A watch misses nothing while it stands (etcd sends every event after it was created), and when
 * it goes away (an error, a broken stream) its candidates are woken to look again: so the backend
 * declares push `'reliable'`, and a follower with a watch sends nothing but its lease's
 * keep-alives. While a candidate waits for nothing, `isWatching` is false and the core polls.
 */
export class PredecessorWatches {
  private readonly elections = new Map<string, Election>();
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
    const sub: Subscription = { election, instanceId, onChange, wait: null, listing: false, generation: 0, revision: 0, closed: false };
    let entry = this.elections.get(election);
    if (!entry) this.elections.set(election, (entry = { subscriptions: new Set(), watch: null }));
    entry.subscriptions.add(sub);
    // Up before the candidate's first campaign, so that its read is younger than the watch.
    this.watchOf(election, entry);
    // Before its first campaign the candidate has no key, and so no predecessor yet: its campaign
    // (`moved`) picks the key to wait for.
    const revision = this.revisionOf(election, instanceId);
    if (revision !== null) {
      sub.revision = revision;
      this.resolve(sub);
    }
    return () => {
      if (sub.closed) return;
      sub.closed = true;
      this.drop(sub);
      entry!.subscriptions.delete(sub);
      if (entry!.subscriptions.size === 0 && this.elections.get(election) === entry) {
        this.elections.delete(election);
        entry!.watch?.cancel();
      }
    };
  }

  /**
   * Waiting for a key on a watch that is up or not yet confirmed: etcd sends every event after
   * the watch was created, and a watch that fails wakes its candidates. (Under load, confirming
   * thousands of watches takes seconds; polling meanwhile would only slow the server down more.)
   */
  isWatching(election: string, instanceId: string): boolean {
    const entry = this.elections.get(election);
    if (!entry) return false;
    for (const sub of entry.subscriptions) if (sub.instanceId === instanceId && sub.wait !== null) return true;
    return false;
  }

  /**
   * The candidate campaigned and its key has create revision `revision`. `seen`: the key to wait
   * for as the campaign's own read showed it (the fence when its key heads the queue, the head
   * when its key comes next), so it waits without listing the queue. A key created anew may have
   * another predecessor: look again. The same key keeps its predecessor until that one is
   * deleted, which wakes it; only a subscription waiting for nothing (nor listing) looks again then.
   */
  moved(election: string, instanceId: string, revision: number, seen?: SeenTarget): void {
    const entry = this.elections.get(election);
    if (!entry) return;
    for (const sub of entry.subscriptions) {
      if (sub.instanceId !== instanceId) continue;
      if (sub.revision === revision && (sub.wait !== null || sub.listing)) continue;
      sub.revision = revision;
      this.resolve(sub, seen);
    }
  }

  /** Whether `key` changed after `revision`, as this process's watch on the election saw; null when it cannot tell. */
  changedAfter(election: string, key: string, revision: number): boolean | null {
    return this.elections.get(election)?.watch?.changedAfter(key, revision) ?? null;
  }

  /** Something changed for everyone (a lease lost): wake and look again. */
  notifyAll(): void {
    for (const entry of this.elections.values()) {
      for (const sub of entry.subscriptions) {
        this.resolve(sub);
        sub.onChange();
      }
    }
  }

  /** Ends every watch; no candidate is woken. */
  close(): void {
    this.closed = true;
    const all = [...this.elections.values()];
    this.elections.clear();
    for (const entry of all) {
      for (const sub of entry.subscriptions) {
        sub.closed = true;
        this.drop(sub);
      }
      entry.watch?.cancel();
    }
  }

  /** The election's watch, set up if there is none (the first candidate, or the last one was lost). */
  private watchOf(election: string, entry: Election): ElectionWatch {
    if (entry.watch) return entry.watch;
    const watch: ElectionWatch = new ElectionWatch(
      this.stream,
      this.keys.root(election),
      (wait) => this.lookBetween(election, wait),
      () => {
        if (entry.watch === watch) entry.watch = null;
      },
    );
    entry.watch = watch;
    return watch;
  }

  /** Stops waiting, and drops any listing in progress. */
  private drop(sub: Subscription): void {
    sub.generation++;
    if (sub.wait) this.elections.get(sub.election)?.watch?.remove(sub.wait);
    sub.wait = null;
    sub.listing = false;
  }

  /**
   * Lists the queue (unless `seen` tells), picks the key to wait for and waits on the election's
   * watch. On failure the candidate waits for nothing (`isWatching` false) and the core polls;
   * the next campaign (`moved`) tries again.
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
      const entry = this.elections.get(sub.election);
      if (!entry?.subscriptions.has(sub)) return;
      // The candidate looks again after a change it waits for, and when the watch is lost (the
      // server ended it, or its stream broke: a change may fall between the two); its campaign
      // (`moved`) picks the next key to wait for, after its own read. When many keys go at once (a
      // process that led many elections died), the campaigns' reads are not queued behind as many
      // listings.
      const wait: Wait = {
        seen: read,
        wake: () => {
          if (!current() || sub.wait !== wait) return;
          this.drop(sub);
          sub.onChange();
        },
      };
      sub.wait = wait;
      this.watchOf(sub.election, entry).add(wait);
    })().catch(() => {
      // Nothing to wait for: the core polls.
      if (current()) this.drop(sub);
    });
  }

  /** Reads the key `wait` waits for, and wakes it if the key changed since the read that chose it. */
  private lookBetween(election: string, wait: Wait): void {
    const { target, existed, revision } = wait.seen;
    void this.listings.txn(this.store, election, [], [op.get(target)], []).then(
      (res) => {
        const now = res.responses[0]?.response_range?.kvs[0];
        if (now ? !existed || Number(now.mod_revision) > Number(revision) : existed) wait.wake();
      },
      // Not known whether the key changed: look again.
      () => wait.wake(),
    );
  }
}
