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

/** A candidate waiting for a change of `seen.target` after `seen.revision`. */
export interface Wait {
  seen: SeenTarget;
  wake(): void;
}

/**
 * One watch on the keys of an election, shared by this process's candidates in it: each waits
 * for one key (its predecessor, or the fence) and only a change of that key wakes it, so a
 * departure still wakes one candidate, not the herd. The watch stands as long as the process has
 * candidates in the election: when a candidate moves on to another key, nothing is sent to the
 * server. (A watch per candidate key would be cancelled and created again at every change: etcd
 * 3.4 copies its buffer of uncommitted writes for each such request, which, after a process that
 * led thousands of elections died, took most of the server's CPU.)
 *
 * A change between the read that chose a key and its wait being added is not missed: the watch
 * remembers the revision of the last change of each key it saw, and when the read is older than
 * the watch itself, `lookBetween` reads the key again.
 */
export class ElectionWatch {
  private readonly handle: WatchHandle;
  /** Revision the watch was created at; null until the server confirms it. */
  private createdAt: number | null = null;
  /** Waits added before the watch was confirmed: checked once it is. */
  private early: Wait[] = [];
  private readonly waits = new Map<string, Set<Wait>>();
  /** The revision of the last change seen of each key. */
  private readonly lastChange = new Map<string, number>();
  private ended = false;

  constructor(
    stream: WatchStream,
    /** The election's root: every key of the election starts with it. */
    root: string,
    /** Reads `wait.seen.target` again and wakes it if the key changed since the read. */
    private readonly lookBetween: (wait: Wait) => void,
    /** The watch was lost (the server ended it, or its stream broke), after every wait was woken. */
    private readonly onLost: () => void,
  ) {
    this.handle = stream.watch(root, {
      created: (revision) => this.created(Number(revision)),
      changed: (kind, key, revision) => this.changed(kind, key, revision),
      lost: () => this.lost(),
    }, prefixEnd(root));
  }

  add(wait: Wait): void {
    let set = this.waits.get(wait.seen.target);
    if (!set) this.waits.set(wait.seen.target, (set = new Set()));
    set.add(wait);
    const readAt = Number(wait.seen.revision);
    if (this.createdAt === null) this.early.push(wait);
    else if (this.createdAt > readAt) this.lookBetween(wait);
    else if ((this.lastChange.get(wait.seen.target) ?? 0) > readAt) wait.wake();
  }

  /** Whether `key` changed after `revision`, as far as the watch saw; null when it was not up at `revision` (it cannot tell). */
  changedAfter(key: string, revision: number): boolean | null {
    if (this.createdAt === null || this.createdAt > revision) return null;
    return (this.lastChange.get(key) ?? 0) > revision;
  }

  remove(wait: Wait): void {
    const set = this.waits.get(wait.seen.target);
    if (!set?.delete(wait)) return;
    if (set.size === 0) this.waits.delete(wait.seen.target);
  }

  cancel(): void {
    this.ended = true;
    this.handle.cancel();
  }

  private created(revision: number): void {
    this.createdAt = revision;
    const early = this.early;
    this.early = [];
    for (const wait of early) {
      if (this.waits.get(wait.seen.target)?.has(wait) && revision > Number(wait.seen.revision)) this.lookBetween(wait);
    }
  }

  private changed(kind: 'put' | 'delete', key: string, revision: number): void {
    this.lastChange.set(key, revision);
    const set = this.waits.get(key);
    if (!set) return;
    for (const wait of [...set]) {
      // An older change (the read already showed its result), or a put its candidate does not wait for.
      if (revision <= Number(wait.seen.revision) || (kind === 'put' && !wait.seen.head)) continue;
      wait.wake();
    }
  }

  private lost(): void {
    if (this.ended) return;
    this.ended = true;
    const all = [...this.waits.values()].flatMap((set) => [...set]);
    this.waits.clear();
    this.onLost();
    for (const wait of all) wait.wake();
  }
}
