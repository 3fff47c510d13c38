import { performance } from 'node:perf_hooks';
import { CreateMode } from 'node-zookeeper-client';
import { fencePrefix, fenceWaitOf, maxLeaseOf, type CandidateNode } from './zookeeper-nodes';
import { czxid, type ElectionQueue } from './zookeeper-queue';
import type { SessionHandle } from './zookeeper-session';

/**
 * The longest lease a deleted node's holder may hold when its node does not record it (created by
 * an older version): two thirds of 40 s, ZooKeeper's default maxSessionTimeout (20 ticks of 2 s).
 */
const UNKNOWN_LEASE_MS = Math.floor((40_000 * 2) / 3);

/** A fence a head found, and what confirming that it leads must delete. */
export interface FenceCheck {
  /** ms until every fence has been waited out on our clock; 0 when all have. */
  waitMs: number;
  /** Paths of the fences to delete with the confirmation. */
  paths: string[];
}

/**
 * The fences (see zookeeper-nodes.ts) an admin leaves when it deletes candidate nodes, and how
 * long a head must wait them out before it leads.
 */
export class Fences {
  /** Fence path → its czxid and when this process first saw it (performance.now()). */
  private readonly seen = new Map<string, { czxid: number; seenAt: number }>();

  constructor(private readonly queue: ElectionQueue) {}

  /**
   * One transaction: delete `nodes`, create a fence that waits the longest lease any of their
   * holders can be granted, and (for force) check that `target` is still there. False when a node
   * went meanwhile (look again). A node gone before its data was read is left out of the wait: it
   * can no longer renew, and it was not ahead of the head when the head confirmed.
   */
  async removeFenced(
    handle: SessionHandle,
    election: string,
    nodes: CandidateNode[],
    target: string | null,
    until: number,
  ): Promise<boolean> {
    const leases = await Promise.all(
      nodes.map(async (n) => {
        const data = await this.queue.getData(handle, this.queue.path(election, n.name), until);
        return data === null ? 0 : (maxLeaseOf(data) ?? UNKNOWN_LEASE_MS);
      }),
    );
    const waitMs = Math.max(0, ...leases);
    return this.queue.commit(handle, until, target === null ? 'clearLeader' : 'forceLeader', (tx) => {
      for (const n of nodes) tx.remove(this.queue.path(election, n.name), -1);
      tx.create(fencePrefix(this.queue.path(election)), Buffer.from(String(waitMs)), this.queue.session.acl(), CreateMode.PERSISTENT_SEQUENTIAL);
      if (target !== null) tx.check(target, -1);
    });
  }

  /**
   * The fences of the election, as a head about to lead sees them: how long it must still wait
   * (each fence's wait counted on this process's clock from when it first saw that fence, told
   * apart by its czxid), and which fences to delete when it confirms.
   */
  async check(handle: SessionHandle, election: string, names: string[], until: number): Promise<FenceCheck> {
    if (names.length === 0) return { waitMs: 0, paths: [] };
    const now = performance.now();
    let waitMs = 0;
    const paths: string[] = [];
    for (const name of names) {
      const path = this.queue.path(election, name);
      const read = await this.queue.readNode(handle, path, until);
      if (read === null) continue; // deleted meanwhile by the head that confirmed
      const id = czxid(read.stat);
      let seen = this.seen.get(path);
      if (!seen || seen.czxid !== id) {
        seen = { czxid: id, seenAt: now };
        this.seen.set(path, seen);
      }
      waitMs = Math.max(waitMs, seen.seenAt + fenceWaitOf(read.data, UNKNOWN_LEASE_MS) - now);
      paths.push(path);
    }
    return { waitMs: waitMs > 0 ? Math.ceil(waitMs) : 0, paths };
  }

  /** The confirmation that deleted `paths` succeeded: nobody waits for them any more. */
  deleted(paths: string[]): void {
    for (const path of paths) this.seen.delete(path);
  }
}
