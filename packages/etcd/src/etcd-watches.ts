import { op, type ElectionKeys, type EtcdStore } from './etcd-store';
import type { TxnBatches } from './etcd-txn-batches';
import { PrefixWatch, type SeenTarget, type Wait } from './etcd-prefix-watch';
import type { WatchStream } from './etcd-watch-stream';

export type { SeenTarget } from './etcd-prefix-watch';

/** One candidate's subscription: the key it waits for now, if any. */
interface Subscription {
  election: string;
  instanceId: string;
  onChange: () => void;
  /** What it waits for, on the process's watch; null while it has nothing to wait for yet. */
  wait: Wait | null;
  /** The queue is being listed to pick the key to wait for (a resolve in progress). */
  listing: boolean;
  /** Bumped on every re-resolve, so a late listing of an older resolve is dropped. */
  generation: number;
  /** Create revision of the candidate's key when the key to wait for was chosen (0: not known). */
  revision: number;
  closed: boolean;
}

/**
 * `watch()` for etcd's recipe: a candidate waits for the key of its predecessor (the candidate
 * key created just before its own), so a departure wakes only its successor; the head of the
 * queue waits for the fence, which an admin's force or clear leaves. The key to wait for comes
 * from a read (a listing of the queue, or the campaign's own read when that showed it); all the
 * candidates of this process share one watch on the backend's keys (`PrefixWatch`), which also
 * finds a change between that read and the wait. After every change it waits for, the candidate
 * looks again (a campaign), and its campaign picks the key to wait for next.
 *
 * A watch misses nothing while it stands (etcd sends every event after it was created), and when
 * it goes away (an error, a broken stream) its candidates are woken to look again: so the backend
 * declares push `'reliable'`, and a follower with a watch sends nothing but its lease's
 * keep-alives. While a candidate waits for nothing, `isWatching` is false and the core polls.
 */
export class PredecessorWatches {
  /** This process's candidates, by election. */
  private readonly elections = new Map<string, Set<Subscription>>();
  /** The watch they share while there are any. */
  private shared: PrefixWatch | null = null;
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
    let subs = this.elections.get(election);
    if (!subs) this.elections.set(election, (subs = new Set()));
    subs.add(sub);
    // Up before the candidate's first campaign, so that its read is younger than the watch.
    this.watchOf();
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
      subs.delete(sub);
      if (subs.size === 0 && this.elections.get(election) === subs) this.elections.delete(election);
      if (this.elections.size === 0) {
        this.shared?.cancel();
        this.shared = null;
      }
    };
  }

  /**
   * Waiting for a key on a watch that is up or not yet confirmed: etcd sends every event after
   * the watch was created, and a watch that fails wakes its candidates. (Under load, confirming
   * thousands of watches takes seconds; polling meanwhile would only slow the server down more.)
   */
  isWatching(election: string, instanceId: string): boolean {
    const subs = this.elections.get(election);
    if (!subs) return false;
    for (const sub of subs) if (sub.instanceId === instanceId && sub.wait !== null) return true;
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
    const subs = this.elections.get(election);
    if (!subs) return;
    for (const sub of subs) {
      if (sub.instanceId !== instanceId) continue;
      if (sub.revision === revision && (sub.wait !== null || sub.listing)) continue;
      sub.revision = revision;
      this.resolve(sub, seen);
    }
  }

  /** Whether `key` changed after `revision`, as this process's watch saw; null when it cannot tell. */
  changedAfter(key: string, revision: number): boolean | null {
    return this.shared?.changedAfter(key, revision) ?? null;
  }

  /** Something changed for everyone (a lease lost): wake and look again. */
  notifyAll(): void {
    for (const subs of this.elections.values()) {
      for (const sub of subs) {
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
    for (const subs of all) {
      for (const sub of subs) {
        sub.closed = true;
        this.drop(sub);
      }
    }
    this.shared?.cancel();
    this.shared = null;
  }

  /** The shared watch, set up if there is none (the first candidate, or the last one was lost). */
  private watchOf(): PrefixWatch {
    if (this.shared) return this.shared;
    const watch: PrefixWatch = new PrefixWatch(
      this.stream,
      this.keys.prefix,
      (wait) => this.lookBetween(wait),
      () => {
        if (this.shared === watch) this.shared = null;
      },
    );
    this.shared = watch;
    return watch;
  }

  /** Stops waiting, and drops any listing in progress. */
  private drop(sub: Subscription): void {
    sub.generation++;
    if (sub.wait) this.shared?.remove(sub.wait);
    sub.wait = null;
    sub.listing = false;
  }

  /**
   * Lists the queue (unless `seen` tells), picks the key to wait for and waits on the election's
   * watch. On failure the candidate waits for nothing (`isWatching` false) and the core polls;
   * the next campaign (`moved`) tries again. `relisting`: the core waits for this candidate to be
   * woken (see `wake` below), so an outcome with nothing to wait for wakes it.
   */
  private resolve(sub: Subscription, seen?: SeenTarget, relisting = false): void {
    if (sub.closed || this.closed) return;
    this.drop(sub);
    const generation = sub.generation;
    const current = () => !sub.closed && sub.generation === generation;
    const own = this.keys.candidate(sub.election, sub.instanceId);
    const fence = this.keys.fence(sub.election);
    const unresolved = () => {
      if (relisting && current()) sub.onChange();
    };
    sub.listing = seen === undefined;
    void (async () => {
      let read: SeenTarget;
      /** The listing found the candidate's key at the head of the queue, which its campaign may not have seen. */
      let headedByListing = false;
      /** The listing found a key between the candidate's predecessor and the head. */
      let behindFollower = false;
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
        // A candidate looking again whose key is gone (deleted behind its back) must campaign to queue again.
        if (target === undefined || (relisting && at < 0)) return unresolved();
        const existed = at === 0 ? (listing.responses[1]?.response_range?.kvs.length ?? 0) > 0 : true;
        read = { target, head: at === 0, existed, revision: String(listing.header.revision) };
        headedByListing = at === 0;
        behindFollower = at >= 2;
      }
      if (!this.elections.get(sub.election)?.has(sub)) return;
      // The candidate looks again after a change it waits for, and when the watch is lost (the
      // server ended it, or its stream broke: a change may fall between the two); its campaign
      // (`moved`) picks the next key to wait for, after its own read. When many keys go at once (a
      // process that led many elections died), the campaigns' reads are not queued behind as many
      // listings. A candidate whose predecessor was not the head lists the queue again instead:
      // that predecessor's departure changes nothing for it unless it now heads the queue (then
      // the listing wakes it), and its campaign would only take a slot from a successor's. Once
      // its predecessor is written (a term starts only at the head: the predecessor's own, or a
      // hand-over's write), its predecessor's departure wakes it, as a successor's does.
      const wait: Wait = {
        election: sub.election,
        seen: read,
        put: () => {
          behindFollower = false;
        },
        // A new term ahead of its predecessor: look again (a campaign), which names the leader.
        queue: this.keys.candidates(sub.election),
        termMoved: () => {
          if (current() && sub.wait === wait) sub.onChange();
        },
        wake: (changed) => {
          if (!current() || sub.wait !== wait) return;
          this.drop(sub);
          if (changed && behindFollower) this.resolve(sub, undefined, true);
          else sub.onChange();
        },
      };
      sub.wait = wait;
      this.watchOf().add(wait);
      // Its predecessors went between its campaign's read and the listing: nothing it waits for
      // will change, and its term starts only when it campaigns. Wake it to look again (a leader
      // renews), keeping the wait for the fence.
      if (headedByListing) sub.onChange();
    })().catch(() => {
      // Nothing to wait for: the core polls, or is woken to look again.
      if (!current()) return;
      this.drop(sub);
      if (relisting) sub.onChange();
    });
  }

  /** Reads the key `wait` waits for, and wakes it if the key changed since the read that chose it. */
  private lookBetween(wait: Wait): void {
    const { target, existed, revision } = wait.seen;
    void this.listings.txn(this.store, wait.election, [], [op.get(target)], []).then(
      (res) => {
        const now = res.responses[0]?.response_range?.kvs[0];
        if (now ? !existed || Number(now.mod_revision) > Number(revision) : existed) wait.wake(true);
      },
      // Not known whether the key changed: look again.
      () => wait.wake(false),
    );
  }
}
