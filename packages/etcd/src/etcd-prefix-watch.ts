import { performance } from 'node:perf_hooks';
import { prefixEnd } from './etcd-store';
import type { WatchHandle, WatchStream } from './etcd-watch-stream';

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

/** A candidate of `election` waiting for a change of `seen.target` after `seen.revision`. */
export interface Wait {
  election: string;
  seen: SeenTarget;
  /** Told of a put of the target after the read, which does not wake it (a wait for the fence is woken). */
  put?(): void;
  /** `changed`: the target changed; false when that is not known (the watch was lost, a read failed). */
  wake(changed: boolean): void;
  /** The prefix of its election's candidate keys, for `termMoved`. */
  queue?: string;
  /**
   * Told when a candidate key of its election (its target among them) is written after the read:
   * a term starting at the head, or handed over. The leader it names may have changed, though no
   * key it waits for went. The wait stands.
   */
  termMoved?(): void;
}

/** How often the revisions of the changes seen are pruned by default, ms: a change is remembered this long at least. */
const PRUNE_EVERY_MS = 30_000;

/**
 * One watch on every key under the backend's prefix, shared by all of this process's candidates:
 * each waits for one key (its predecessor, or its election's fence) and only a change of that key
 * wakes it, so a departure still wakes one candidate, not the herd. The watch stands as long as the
 * process has candidates: when a candidate moves on to another key, or another election starts or
 * ends, nothing is sent to the server. (A watch per election meant tens of thousands of watch
 * requests for a process in thousands of elections, each one a copy of etcd 3.4's buffer of
 * uncommitted writes, and one watch response per election when a process that led them all died;
 * with one watch, the deletions of one lease revocation come in one response.)
 *
 * A change between the read that chose a key and its wait being added is not missed: the watch
 * remembers the revision of the last change of each key it saw (for `PRUNE_EVERY_MS` at least),
 * and when the read is older than what it remembers (older than the watch itself, or than the
 * changes it forgot), `lookBetween` reads the key again.
 */
export class PrefixWatch {
  private readonly handle: WatchHandle;
  /** Revision the watch was created at; null until the server confirms it. */
  private createdAt: number | null = null;
  /** Waits added before the watch was confirmed: checked once it is. */
  private early: Wait[] = [];
  private readonly waits = new Map<string, Set<Wait>>();
  /** The waits that want `termMoved`, by the prefix of their election's candidate keys. */
  private readonly queues = new Map<string, Set<Wait>>();
  /** The revision of the last change seen of each key, since `forgotThrough`. */
  private readonly lastChange = new Map<string, number>();
  /** Changes at or below this revision may have been forgotten (pruned). */
  private forgotThrough = 0;
  /** The highest revision seen, and the one seen when the last prune ran (the next prune's bound). */
  private latest = 0;
  private pruneBound = 0;
  private nextPruneAt: number;
  private ended = false;

  constructor(
    stream: WatchStream,
    /** Every key of the backend starts with it. */
    private readonly prefix: string,
    /** Reads `wait.seen.target` again and wakes it if the key changed since the read. */
    private readonly lookBetween: (wait: Wait) => void,
    /** The watch was lost (the server ended it, or its stream broke), after every wait was woken. */
    private readonly onLost: () => void,
    private readonly pruneEveryMs = PRUNE_EVERY_MS,
  ) {
    this.nextPruneAt = performance.now() + pruneEveryMs;
    this.handle = stream.watch(prefix, {
      created: (revision) => this.created(Number(revision)),
      changed: (kind, key, revision, created) => this.changed(kind, key, revision, created),
      lost: () => this.lost(),
    }, prefixEnd(prefix));
  }

  add(wait: Wait): void {
    let set = this.waits.get(wait.seen.target);
    if (!set) this.waits.set(wait.seen.target, (set = new Set()));
    set.add(wait);
    if (wait.queue !== undefined && wait.termMoved) {
      let queue = this.queues.get(wait.queue);
      if (!queue) this.queues.set(wait.queue, (queue = new Set()));
      queue.add(wait);
    }
    const readAt = Number(wait.seen.revision);
    if (this.createdAt === null) this.early.push(wait);
    else if (this.knownFrom() > readAt) this.lookBetween(wait);
    else if ((this.lastChange.get(wait.seen.target) ?? 0) > readAt) wait.wake(true);
  }

  remove(wait: Wait): void {
    const queue = wait.queue === undefined ? undefined : this.queues.get(wait.queue);
    if (queue?.delete(wait) && queue.size === 0) this.queues.delete(wait.queue!);
    const set = this.waits.get(wait.seen.target);
    if (!set?.delete(wait)) return;
    if (set.size === 0) this.waits.delete(wait.seen.target);
  }

  /** Whether `key` changed after `revision`, as far as the watch saw; null when it cannot tell (it was not up then, or forgot). */
  changedAfter(key: string, revision: number): boolean | null {
    if (this.createdAt === null || this.knownFrom() > revision) return null;
    return (this.lastChange.get(key) ?? 0) > revision;
  }

  cancel(): void {
    this.ended = true;
    this.handle.cancel();
  }

  /** Every change after this revision is in `lastChange` (the watch must be confirmed). */
  private knownFrom(): number {
    return Math.max(this.createdAt ?? Infinity, this.forgotThrough);
  }

  private created(revision: number): void {
    this.createdAt = revision;
    const early = this.early;
    this.early = [];
    for (const wait of early) {
      if (this.waits.get(wait.seen.target)?.has(wait) && revision > Number(wait.seen.revision)) this.lookBetween(wait);
    }
  }

  private changed(kind: 'put' | 'delete', key: string, revision: number, created: boolean): void {
    this.lastChange.set(key, revision);
    if (revision > this.latest) this.latest = revision;
    this.pruneWhenDue();
    if (kind === 'put' && !created) this.termMovedIn(key, revision);
    const set = this.waits.get(key);
    if (!set) return;
    for (const wait of [...set]) {
      // An older change (the read already showed its result), or a put its candidate does not wait for.
      if (revision <= Number(wait.seen.revision)) continue;
      if (kind === 'put' && !wait.seen.head) wait.put?.();
      else wait.wake(true);
    }
  }

  /**
   * A write of an existing candidate key (a term starting at the head of its queue, or handed
   * over to it) tells the election's other waits that the leader may have changed: a follower
   * waits for its predecessor only, and one two places behind the head would otherwise go on
   * naming a leader that left.
   */
  private termMovedIn(key: string, revision: number): void {
    // Keys are `<prefix><election>/c/<instance id>`; election names hold no `/`.
    const slash = key.indexOf('/', this.prefix.length);
    if (slash < 0 || !key.startsWith('c/', slash + 1)) return;
    const queue = this.queues.get(key.slice(0, slash + 3));
    if (!queue) return;
    for (const wait of [...queue]) {
      if (revision > Number(wait.seen.revision)) wait.termMoved?.();
    }
  }

  /**
   * Forgets the changes at or below the highest revision seen one period ago, so that what is
   * remembered does not grow with every key the prefix ever had. A wait whose read is older
   * than that reads its key again (`add`), as one older than the watch does.
   */
  private pruneWhenDue(): void {
    const now = performance.now();
    if (now < this.nextPruneAt) return;
    this.nextPruneAt = now + this.pruneEveryMs;
    const bound = this.pruneBound;
    this.pruneBound = this.latest;
    if (bound <= this.forgotThrough) return;
    for (const [key, revision] of this.lastChange) if (revision <= bound) this.lastChange.delete(key);
    this.forgotThrough = bound;
  }

  private lost(): void {
    if (this.ended) return;
    this.ended = true;
    const all = [...this.waits.values()].flatMap((set) => [...set]);
    this.waits.clear();
    this.queues.clear();
    this.onLost();
    for (const wait of all) wait.wake(false);
  }
}
