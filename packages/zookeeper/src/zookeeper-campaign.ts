import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import type { CampaignResult } from '@conclave/core/spi';
import { offsetOf, withOffset } from './zookeeper-nodes';
import { adopt, forgetNode, type Candidacies, type Candidacy } from './zookeeper-candidacy';
import type { Fences } from './zookeeper-fences';
import { MAX_ROUNDS, czxid, queueKeptChanging, termToken, type CandidateQueue, type ElectionQueue } from './zookeeper-queue';
import type { Floor, TokenFloor } from './zookeeper-token-floor';
import type { SessionHandle } from './zookeeper-session';

/**
 * The campaign algorithm: join the queue, follow the predecessor, and lead only once the quorum
 * confirms that nothing is ahead of our node.
 */
export class Campaigner {
  constructor(
    private readonly queue: ElectionQueue,
    private readonly candidacies: Candidacies,
    private readonly floor: TokenFloor,
    private readonly fences: Fences,
    /** Wakes the `watch` subscribers of a candidate. */
    private readonly notify: (k: string) => void,
  ) {}

  /** `campaign` once it has its turn (no other campaign or release of this candidate running). */
  async rounds(
    election: string,
    candidateId: string,
    leaseMs: number,
    calledAt: number,
    until: number,
    value: string | undefined,
    signal?: AbortSignal,
  ): Promise<CampaignResult> {
    const session = this.queue.session;
    const c = this.candidacies.open(election, candidateId);
    // Recorded on the node when it is created; a node already there keeps the value it has.
    c.value = value;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      // A caller that gave up will not use the answer: send no further round (the SPI's rule for
      // calls the core gives up on, backend.ts). What the earlier rounds did stays, as after a
      // request that timed out: the next campaign finds the node by its guid.
      if (signal?.aborted) throw gaveUpMidway(election, signal);
      const handle = session.current();
      if (c.node && !session.isCurrent(c.node.handle)) forgetNode(c);
      const queue = await this.queue.list(handle, election, until, true);
      let index = c.node
        ? queue.findIndex((n) => n.name === c.node!.name)
        : c.created
          ? queue.findIndex((n) => n.guid === c.guid)
          : -1;
      if (index < 0) {
        // Never created, or deleted by forceLeader/clearLeader: join at the back of the queue.
        if (c.node) forgetNode(c);
        const floor = await this.floor.read(handle, election, queue.electionVersion, until);
        await this.candidacies.createNode(handle, c, election, candidateId, leaseMs, floor.offset, until);
        continue;
      }
      const mine = queue[index]!;
      if (
        index === 0 &&
        c.node !== null &&
        c.node.name === mine.name &&
        c.ownWatched &&
        c.node.handle.client === handle.client &&
        session.isCurrent(c.node.handle) &&
        !queue.some((n) => n.candidateId === candidateId && n.name !== mine.name)
      ) {
        // Fast path (a follower whose predecessor, the head, went): the list just read puts our
        // node first, and our own read in this session already checked its ephemeralOwner
        // and czxid (its watch is still armed). Only the quorum can tell that it is still there.
        const result = await this.leadIfConfirmed(handle, c, election, queue, leaseMs, calledAt, until);
        if (result === null) continue;
        return result;
      }
      // Any other node of this candidate in our session is a stray (a create whose answer was
      // lost, or one made by a call its caller had given up on): it would hold a place in the
      // queue, possibly the head, for the whole session. Delete it and look again.
      if ((await this.candidacies.deleteStrays(handle, c, election, candidateId, queue, mine.name, until)) > 0) continue;
      const minePath = this.queue.path(election, mine.name);
      if (index === 0) {
        // The own-node watch tells a leader at once that its node went (clear, force, expiry).
        const own = await this.queue.readNode(handle, minePath, until, c.watcher);
        if (!own || !this.queue.ownedBy(own.stat, handle)) {
          // Gone, or left by another (expired) session that a lagging server still shows:
          // never lead on a node that is not ours (Curator's LeaderLatch check).
          forgetNode(c);
          continue;
        }
        adopt(c, mine.name, minePath, own, handle);
        c.ownWatched = true;
        const result = await this.leadIfConfirmed(handle, c, election, queue, leaseMs, calledAt, until);
        if (result === null) continue;
        return result;
      }
      const leader = queue[0]!;
      const predecessor = queue[index - 1]!;
      // Watch the predecessor (when it goes, we may lead) and the head (when it goes, the leader
      // we name changes), nobody else: a departure elsewhere in the queue wakes only the
      // departed node's successor. The head's watch is the only way a follower further back
      // learns of a change of leader ahead of its predecessor; without it, it would go on
      // naming a leader that left for as long as its predecessor stays.
      const [own, before, lead] = await Promise.all([
        this.queue.readNode(handle, minePath, until, c.watcher),
        this.queue.readNode(handle, this.queue.path(election, predecessor.name), until, c.watcher),
        index > 1 ? this.queue.readNode(handle, this.queue.path(election, leader.name), until, c.watcher) : Promise.resolve(null),
      ]);
      if (!own || !this.queue.ownedBy(own.stat, handle)) {
        forgetNode(c);
        continue;
      }
      adopt(c, mine.name, minePath, own, handle);
      c.ownWatched = true;
      // The predecessor or the head left meanwhile (no watch is left on a node that is gone):
      // look again rather than name a leader that is no longer there.
      const leaderNode = index === 1 ? before : lead;
      if (!before || !leaderNode) continue;
      return {
        role: 'follower',
        leaderId: leader.candidateId,
        token: termToken(czxid(leaderNode.stat), offsetOf(leaderNode.data)),
      };
    }
    throw queueKeptChanging(election);
  }

  /**
   * Our node heads `queue`: waits out the fences of the heads an admin removed (answering
   * "follower" meanwhile), else confirms the head (see `confirmHead`). `null` when the round must
   * look again.
   */
  private async leadIfConfirmed(
    handle: SessionHandle,
    c: Candidacy,
    election: string,
    queue: CandidateQueue,
    leaseMs: number,
    calledAt: number,
    until: number,
  ): Promise<CampaignResult | null> {
    const [fences, floor] = await Promise.all([
      this.fences.check(handle, election, queue.fences, until),
      this.floor.read(handle, election, queue.electionVersion, until),
    ]);
    if (fences.waitMs > 0) return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: fences.waitMs };
    const lease = await this.confirmHead(handle, c, election, leaseMs, calledAt, until, fences.paths, floor);
    return lease === null ? null : { role: 'leader', token: lease.token, leaseMs: lease.leaseMs };
  }

  /**
   * The last step before a campaign may answer "leader": a `multi` with a `check` of our node's
   * version. Reads (the queue, `exists`) are answered by whichever server the session is on, and
   * a server cut off from its peers keeps answering them from a stale copy while the quorum has
   * expired our session and elected someone else. A multi is a write: it goes through the
   * ensemble's leader and is answered only once the quorum has ordered it, after the reads.
   *
   * That is enough: the stale view is a prefix of the quorum's history, so the predecessors it
   * showed gone are gone for good (nodes are never re-created under the same name), and our own
   * node still existing in the quorum's state, with nothing ahead of it, proves it is the lowest.
   *
   * The fences the head waited out (see zookeeper-nodes.ts) are deleted in the same transaction,
   * so a fence goes only with a confirmation that nobody ahead is left; another head that deleted
   * one first makes this one fail, and the caller looks again. (Fence names are never reused, so
   * deleting by name is as good as by version; the client sends version 0 as "any" anyway.)
   *
   * The token floor (see zookeeper-nodes.ts) joins the same transaction. A node confirmed for
   * the first time leads with the offset `floor` read in this round: the election node's version
   * is checked, so a raise that resolved before this confirmation makes it fail and the caller
   * reads the floor again; when the node does not yet record that offset, the transaction writes
   * it there (version-checked like the `check` it replaces), so every reader computes the same
   * token. A node already confirmed in this session keeps the token of its running term.
   *
   * Resolves with the term's token and the lease, counted from when the campaign was called as
   * the core counts it: the session is proven alive from the confirmation's send, so the time
   * elapsed before that is taken off. `null` when the node is gone (forgotten; the caller looks
   * again), a fence was, or the floor moved.
   */
  private async confirmHead(
    handle: SessionHandle,
    c: Candidacy,
    election: string,
    leaseMs: number,
    calledAt: number,
    until: number,
    fences: string[],
    floor: Floor,
  ): Promise<{ token: number; leaseMs: number } | null> {
    const node = c.node!;
    // A first confirmation always writes the node (the offset, maybe unchanged): its mtime, set by
    // the quorum, is then when the term started (`since` in getLeader).
    const rewrite = !node.confirmed;
    const data = rewrite ? withOffset(node.data, floor.offset) : node.data;
    const confirmAt = performance.now();
    const there = await this.queue.commit(handle, until, 'confirm leadership', (tx) => {
      if (rewrite) tx.setData(node.path, data, node.version);
      else tx.check(node.path, node.version);
      if (!node.confirmed) tx.check(this.queue.path(election), floor.version);
      for (const fence of fences) tx.remove(fence, -1);
    });
    if (!there) {
      // Our node, a fence or the floor changed. The failed multi was ordered by the quorum and a
      // session's answers come in order, so this read sees at least what made it fail.
      if (c.node === node && fences.length === 0) {
        const now = await this.queue.readNode(handle, node.path, until);
        if (!now || !this.queue.ownedBy(now.stat, handle) || czxid(now.stat) !== node.czxid) forgetNode(c);
      }
      return null;
    }
    this.fences.deleted(fences);
    if (!node.confirmed) {
      node.confirmed = true;
      node.offset = rewrite ? floor.offset : node.offset;
      node.token = termToken(node.czxid, node.offset);
      if (rewrite) {
        node.data = data;
        node.version += 1;
        // Writing the data fired our own watch: arm it again, or a leader would learn that its
        // node went only at its next renewal.
        const again = await this.queue.readNode(handle, node.path, until, c.watcher).catch(() => null);
        if (c.node === node) {
          if (again && this.queue.ownedBy(again.stat, handle) && again.stat.version === node.version) c.ownWatched = true;
          else this.notify(c.key);
        }
      }
    }
    return {
      token: node.token,
      leaseMs: Math.max(1, this.queue.grant(handle, leaseMs, c.maxLeaseMs) - Math.ceil(confirmAt - calledAt)),
    };
  }
}

/** A campaign whose caller gave up between two of its rounds (the later ones were not sent). */
function gaveUpMidway(election: string, signal: AbortSignal): ConclaveError {
  return new ConclaveError('BACKEND_UNAVAILABLE', 'campaign stopped: the caller gave up on it', {
    backend: 'zookeeper',
    election,
    cause: signal.reason,
  });
}
