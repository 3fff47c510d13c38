import type { Etcd3, Watcher } from 'etcd3';
import type { ElectionKeys, EtcdStore } from './etcd-store';

/** One candidate's subscription: the key it watches now, and whether that watch is up. */
interface Subscription {
  election: string;
  instanceId: string;
  onChange: () => void;
  /** The etcd watcher on the key this candidate waits for; null while none is up. */
  watcher: Watcher | null;
  /** A watcher attached but not yet confirmed by the server (cancelled with the subscription). */
  pending: Watcher | null;
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
 * watches the fence, which an admin's force or clear leaves. Each watch starts at the revision of
 * the read it was derived from (a listing of the queue, or for the head the campaign's own read),
 * so nothing between the two is missed. After every event the candidate looks again (a campaign),
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
    private readonly client: Etcd3,
    private readonly store: EtcdStore,
    private readonly keys: ElectionKeys,
    /** The create revision of the candidate's key as this process knows it; null before its first campaign. */
    private readonly revisionOf: (election: string, instanceId: string) => number | null,
  ) {}

  watch(election: string, instanceId: string, onChange: () => void): () => void {
    const sub: Subscription = { election, instanceId, onChange, watcher: null, pending: null, listing: false, target: null, generation: 0, revision: 0, closed: false };
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
    for (const sub of set) if (sub.watcher !== null || sub.pending !== null) return true;
    return false;
  }

  /**
   * The candidate campaigned and its key has create revision `revision` (`headAt`: its key headed
   * the queue as of that revision, read by the campaign, so it watches the fence from there without
   * listing the queue). A key created anew may
   * have another predecessor: look again. The same key keeps its predecessor until that one is
   * deleted, which the watch reports; only a subscription without a watch (nor one being set up)
   * looks again then.
   */
  moved(election: string, instanceId: string, revision: number, headAt?: string): void {
    const set = this.subscriptions.get(this.idOf(election, instanceId));
    if (!set) return;
    for (const sub of set) {
      if (sub.revision === revision && (sub.watcher !== null || sub.pending !== null || sub.listing)) continue;
      sub.revision = revision;
      this.resolve(sub, headAt);
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

  /**
   * Cancels every watcher, waiting up to `timeoutMs` for the server to confirm: a watcher left
   * attached would have etcd3 re-establish its watch stream, with backoff, even after the client
   * is closed (the process would never exit).
   */
  async close(timeoutMs: number): Promise<void> {
    this.closed = true;
    const all = [...this.subscriptions.values()].flatMap((s) => [...s]);
    this.subscriptions.clear();
    const cancels: Array<Promise<void>> = [];
    for (const sub of all) {
      sub.closed = true;
      cancels.push(...this.drop(sub));
    }
    if (cancels.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(cancels), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  private idOf(election: string, instanceId: string): string {
    return `${election}\n${instanceId}`;
  }

  /** Ends the subscription's watch (confirmed or still pending); the cancellations, settled. */
  private drop(sub: Subscription): Array<Promise<void>> {
    sub.generation++;
    const watchers = [sub.watcher, sub.pending].filter((w): w is Watcher => w !== null);
    sub.watcher = null;
    sub.pending = null;
    sub.listing = false;
    sub.target = null;
    return watchers.map((w) => w.cancel().catch(() => undefined));
  }

  /**
   * Lists the queue, picks the key to watch and starts watching it from the listing's revision.
   * On failure the candidate has no watch (`isWatching` false) and the core polls; the next
   * campaign (`moved`) tries again.
   */
  private resolve(sub: Subscription, headAt?: string): void {
    if (sub.closed || this.closed) return;
    void this.drop(sub);
    const generation = sub.generation;
    const own = this.keys.candidate(sub.election, sub.instanceId);
    sub.listing = headAt === undefined;
    void (async () => {
      let at = 0;
      let target: string | null = this.keys.fence(sub.election);
      let fromRevision = headAt;
      if (fromRevision === undefined) {
        const listing = await this.store
          .range(this.keys.candidates(sub.election), { prefix: true, sortByCreate: true, keysOnly: true }, sub.election)
          .finally(() => {
            if (sub.generation === generation) sub.listing = false;
          });
        if (sub.closed || sub.generation !== generation) return;
        const keys = listing.kvs.map((kv) => kv.key.toString());
        at = keys.indexOf(own);
        // Not in the queue: wait for the head (the leader) to go. Head: wait for a fence to come or go.
        target = at < 0 ? (keys[0] ?? null) : at === 0 ? this.keys.fence(sub.election) : keys[at - 1]!;
        fromRevision = String(listing.header.revision);
      }
      if (target === null) return;
      // Attached at once and kept as pending, so that a subscription dropped before the server
      // confirms the watch (a member down: it may never) still cancels it.
      const watcher = this.client
        .watch()
        .key(target)
        .startRevision(String(Number(fromRevision) + 1))
        .watcher();
      sub.pending = watcher;
      const confirmed = await new Promise<boolean>((resolve) => {
        watcher.once('connected', () => resolve(true));
        watcher.once('error', () => resolve(false));
        watcher.once('disconnected', () => resolve(false));
        watcher.once('end', () => resolve(false));
      });
      if (!confirmed) {
        // It counted as a watch (isWatching): the candidate looks again now, and its campaign
        // sets up a new one.
        if (sub.closed || sub.generation !== generation) return;
        void this.drop(sub);
        sub.onChange();
        return;
      }
      if (sub.closed || sub.generation !== generation) {
        void watcher.cancel().catch(() => undefined);
        return;
      }
      sub.pending = null;
      sub.watcher = watcher;
      sub.target = target;
      // The candidate looks again; its campaign (`moved`) picks the next key to watch, after its
      // own read: when many keys go at once (a process that led many elections died), the
      // campaigns' reads are not queued behind as many listings.
      const fire = () => {
        if (sub.closed || sub.generation !== generation) return;
        void this.drop(sub);
        sub.onChange();
      };
      watcher.on('delete', fire);
      if (at === 0) watcher.on('put', fire);
      // The watch went away (an error, or its stream broke: etcd3 would resume it, but a change
      // can fall between its resumed revision and the events still to come). The Elector, which
      // counts on the watch, looks again now; its campaign sets up a new watch.
      const lost = () => {
        if (sub.closed || sub.generation !== generation) return;
        void this.drop(sub);
        sub.onChange();
      };
      watcher.on('error', lost);
      watcher.on('disconnected', lost);
      // A subscription in place may have missed nothing; a change before it is the caller's to read.
    })().catch(() => {
      // No watch: the core polls; a watcher still attached is cancelled (see close()).
      if (sub.generation === generation) void this.drop(sub);
    });
  }
}
