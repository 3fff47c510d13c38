import { ConclaveError } from '@conclave/core';
import { candidateOf, type LeaderInfo } from '@conclave/core/spi';
import { offsetOf } from './zookeeper-nodes';
import type { Fences } from './zookeeper-fences';
import { MAX_ROUNDS, czxid, queueKeptChanging, termToken, type ElectionQueue } from './zookeeper-queue';
import type { TokenFloor } from './zookeeper-token-floor';

const KIND = 'zookeeper';

/** The operator's calls that change who leads: force a candidate, clear the leader. */
export class ElectionAdmin {
  constructor(
    private readonly queue: ElectionQueue,
    private readonly fences: Fences,
    private readonly floor: TokenFloor,
  ) {}

  /**
   * Makes `candidateId` lead by deleting, in one transaction, every node ahead of its first node,
   * and creating a fence (see zookeeper-nodes.ts): the candidate, now head, leads with its own
   * node's token (czxid + offset, greater than every earlier token) once the longest lease a
   * deleted node's holder could still believe in has passed. The deleted leader learns it at its
   * next renewal (its node is gone, which the renewal's transaction checks on the quorum), so the
   * two terms never overlap; the deleted candidates rejoin at the back. ZooKeeper cannot create an ephemeral node
   * for another session, so a candidate that is not campaigning cannot be forced:
   * `NOT_SUPPORTED`. Forcing the current leader changes nothing and returns its token.
   */
  async force(election: string, candidateId: string, until: number): Promise<LeaderInfo> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const handle = this.queue.session.current();
      const queue = await this.queue.list(handle, election, until);
      // The candidate's first node, whichever of its instances (Electors) made it.
      const index = queue.findIndex((n) => candidateOf(n.candidateId) === candidateId);
      if (index < 0) {
        throw new ConclaveError(
          'NOT_SUPPORTED',
          `cannot force candidate ${JSON.stringify(candidateId)}: it is not campaigning (ZooKeeper can only promote a candidate that has a node in the queue)`,
          { backend: KIND, election },
        );
      }
      const target = this.queue.path(election, queue[index]!.name);
      if (index > 0) {
        const removed = await this.fences.removeFenced(handle, election, queue.slice(0, index), target, until);
        if (!removed) continue; // someone ahead left (or the target did) meanwhile: look again
      }
      const read = await this.queue.readNode(handle, target, until);
      if (!read) continue;
      // A target that was not head has not led on this node yet: it will confirm with the
      // floor as it is now (or higher), not the one it recorded when it joined.
      const floor = index > 0 ? (await this.floor.read(handle, election, -1, until)).offset : 0;
      return { candidateId, token: termToken(czxid(read.stat), Math.max(offsetOf(read.data), floor)) };
    }
    throw queueKeptChanging(election);
  }

  /**
   * Deletes the leader's node and leaves a fence, so the next candidate leads only once the
   * deleted leader's lease could have ended. The election node is never deleted.
   */
  async clear(election: string, until: number): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const handle = this.queue.session.current();
      const queue = await this.queue.list(handle, election, until);
      if (!queue[0]) return;
      if (await this.fences.removeFenced(handle, election, [queue[0]], null, until)) return;
    }
    throw queueKeptChanging(election);
  }
}
