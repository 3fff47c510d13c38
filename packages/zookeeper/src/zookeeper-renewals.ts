import { Exception } from 'node-zookeeper-client';
import { TickBatcher } from '@conclave/core/spi';
import { zkCode } from './zookeeper-client-util';
import { czxid, type ElectionQueue } from './zookeeper-queue';
import type { SessionHandle } from './zookeeper-session';

export interface RenewItem {
  handle: SessionHandle;
  path: string;
  /** The node's czxid: tells it apart from a later node of the same name (there is none, but cheap). */
  czxid: number;
  until: number;
}

/**
 * Most `check` ops in one renewal `multi`. A multi is a transaction the server keeps whole in its
 * in-memory list of the last committed requests (the last 500 by default: `commitLogCount` in the
 * ZooKeeper Administrator's Guide), so that list's size grows with the batch. With thousands of
 * leaders in one process, batches of hundreds filled the heap of a small server (128 MB) with
 * renewals alone, and its garbage collector stalled it until every lease ran out. Batches of 50
 * keep that list small and still go out together, in the same turn (one round trip of latency).
 */
export const RENEWALS_PER_MULTI = 50;

/** Whether leaders' nodes are still there, checked for every renewal of one turn at once. */
export class RenewalBatcher {
  private readonly batcher: TickBatcher<RenewItem, boolean>;

  constructor(private readonly queue: ElectionQueue) {
    this.batcher = new TickBatcher((items) => this.renewBatch(items), RENEWALS_PER_MULTI);
  }

  /** Resolves whether `item`'s node is still ours in the live session. */
  submit(item: RenewItem): Promise<boolean> {
    return this.batcher.submit(item);
  }

  /**
   * Renews every lease asked for in one event-loop turn with `multi`s of `check` ops (at most
   * `RENEWALS_PER_MULTI` each, all sent at once): a single round trip that goes through the
   * ensemble's leader, so a stale follower cannot vouch for a node that is gone. If one check of
   * a multi fails, each node of it is looked at on its own (one more round trip).
   */
  private async renewBatch(items: RenewItem[]): Promise<boolean[]> {
    const results = new Array<boolean>(items.length).fill(false);
    const byClient = new Map<SessionHandle['client'], number[]>();
    items.forEach((item, i) => {
      if (!this.queue.session.isCurrent(item.handle)) return; // expired meanwhile: not held
      const list = byClient.get(item.handle.client) ?? [];
      list.push(i);
      byClient.set(item.handle.client, list);
    });
    await Promise.all(
      [...byClient.values()].map(async (indexes) => {
        const first = items[indexes[0]!]!;
        const until = Math.max(...indexes.map((i) => items[i]!.until));
        try {
          const allThere = await this.queue.commit(first.handle, until, 'renew', (tx) => {
            for (const i of indexes) tx.check(items[i]!.path, -1);
          });
          if (allThere) {
            for (const i of indexes) results[i] = true;
            return;
          }
          // The failed multi went through the ensemble's leader too (a multi is a write, ordered
          // by the quorum even when a check fails), and a session's requests are answered in
          // order, so these reads see at least the state that made it fail: a node deleted by
          // forceLeader/clearLeader is not reported as still there.
          await Promise.all(
            indexes.map(async (i) => {
              const stat = await this.queue.exists(first.handle, items[i]!.path, until);
              results[i] = stat !== null && this.queue.ownedBy(stat, first.handle) && czxid(stat) === items[i]!.czxid;
            }),
          );
        } catch (err) {
          // Our session is gone: its nodes went with it, so nothing is held.
          if (zkCode(err) === Exception.SESSION_EXPIRED) return;
          throw err;
        }
      }),
    );
    return results;
  }
}
