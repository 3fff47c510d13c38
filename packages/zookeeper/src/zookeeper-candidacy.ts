import { performance } from 'node:perf_hooks';
import { CreateMode, Event, Exception, type Stat } from 'node-zookeeper-client';
import { candidateOf } from '@conclave/core/spi';
import { newGuid, nodeData, nodePrefix, offsetOf, type CandidateNode } from './zookeeper-nodes';
import { zkCode } from './zookeeper-client-util';
import { czxid, termToken, type ElectionQueue } from './zookeeper-queue';
import type { SessionHandle } from './zookeeper-session';

/** What this process knows of one candidate's node in one election. */
export interface Candidacy {
  key: string;
  /** Guid of the protected prefix for this candidacy's node. */
  guid: string;
  /** A create was sent with `guid` (its answer may have been lost): look for it before creating. */
  created: boolean;
  /**
   * The longest lease the node of this candidacy records (see `createNode`); no grant on it is
   * longer, so a fence that waits this long outlasts whatever its holder believes.
   */
  maxLeaseMs: number | null;
  /** Our node, once seen. */
  node: OwnNode | null;
  /** The value the candidacy publishes, recorded on the node it creates; undefined when none. */
  value: string | undefined;
  /**
   * The own-node watch is armed on `node` (set by an `exists` that found the node owned by our
   * session, cleared when that watch fires). While it is, the node is ours and has not gone as
   * far as the server has told us: the fast path of `campaign` relies on it.
   */
  ownWatched: boolean;
  /** One function per candidacy, so the client keeps one watch per path, not one per call. */
  watcher: (event?: { getPath?: () => string; getType?: () => number }) => void;
}

/** Our own candidate node, as last read. */
export interface OwnNode {
  name: string;
  path: string;
  czxid: number;
  /** Its data as last read or written (id, longest lease, token offset). */
  data: Buffer | null;
  /** The token offset its data records. */
  offset: number;
  /** czxid + offset: the token of the term it leads (final once `confirmed`). */
  token: number;
  version: number;
  handle: SessionHandle;
  /**
   * A confirmation of this node as head succeeded in this session: its term has started and keeps
   * its token (a later raise of the floor does not change it, see `Campaigner.confirmHead`).
   */
  confirmed: boolean;
}

/** The key of one candidate (election + instance id) in this process. */
export function candidacyKey(election: string, candidateId: string): string {
  return `${election}\u0000${candidateId}`;
}

/** Our node is gone (or was never ours): the next create uses a fresh guid. */
export function forgetNode(c: Candidacy): void {
  c.node = null;
  c.ownWatched = false;
  c.guid = newGuid();
  c.created = false;
}

/**
 * Records our node as just read. The same node already confirmed in this session keeps its
 * term (token, confirmed); anything else is taken as read.
 */
export function adopt(c: Candidacy, name: string, path: string, read: { data: Buffer | null; stat: Stat }, handle: SessionHandle): void {
  const id = czxid(read.stat);
  const previous = c.node;
  const offset = offsetOf(read.data);
  const confirmed =
    previous !== null && previous.confirmed && previous.czxid === id && previous.handle.client === handle.client;
  c.node = {
    name,
    path,
    czxid: id,
    data: read.data,
    offset: confirmed ? previous.offset : offset,
    token: confirmed ? previous.token : termToken(id, offset),
    version: read.stat.version,
    handle,
    confirmed,
  };
}

/**
 * The candidacies of this process: each one's guid-protected node (created, found again after a
 * lost answer, told apart from strays of the same candidate), its watch, and its withdrawal.
 */
export class Candidacies {
  private readonly byKey = new Map<string, Candidacy>();

  constructor(
    private readonly queue: ElectionQueue,
    private readonly requestTimeoutMs: number,
    /** Wakes the `watch` subscribers of a candidate. */
    private readonly notify: (k: string) => void,
  ) {}

  get(k: string): Candidacy | undefined {
    return this.byKey.get(k);
  }

  /** No candidacy has (or may have) a node: the session holds none of ours. */
  idle(): boolean {
    return ![...this.byKey.values()].some((c) => c.created || c.node !== null);
  }

  /** The session expired: every node of the old session is gone, so no candidacy of ours exists. */
  forgetAllNodes(): void {
    for (const c of this.byKey.values()) forgetNode(c);
  }

  clear(): void {
    this.byKey.clear();
  }

  /** The candidacy of `candidateId` in `election`, made on first use. */
  open(election: string, candidateId: string): Candidacy {
    const k = candidacyKey(election, candidateId);
    let c = this.byKey.get(k);
    if (!c) {
      const candidacy: Candidacy = {
        key: k,
        guid: newGuid(),
        created: false,
        maxLeaseMs: null,
        node: null,
        value: undefined,
        ownWatched: false,
        watcher: (event) => {
          const path = event?.getPath?.();
          // The own-node watch fired (deleted or changed): no longer proof that the node is there.
          if (candidacy.node && path === candidacy.node.path) candidacy.ownWatched = false;
          else if (path !== undefined && event?.getType?.() === Event.NODE_DATA_CHANGED) {
            // The predecessor or the head wrote its data (its first confirmation as leader, whom
            // our last answer already named): nothing for us to do but watch it again, so that
            // only its end wakes us.
            this.rewatch(k, path, candidacy);
            return;
          }
          this.notify(k);
        },
      };
      c = candidacy;
      this.byKey.set(k, c);
    }
    return c;
  }

  /** Arms the candidacy's watch on `path` again; wakes the candidate if it is gone or cannot tell. */
  private rewatch(k: string, path: string, c: Candidacy): void {
    let handle: SessionHandle;
    try {
      handle = this.queue.session.current();
    } catch {
      return; // closed
    }
    this.queue.exists(handle, path, performance.now() + this.requestTimeoutMs, c.watcher).then(
      (stat) => {
        if (stat === null) this.notify(k);
      },
      () => this.notify(k),
    );
  }

  async createNode(
    handle: SessionHandle,
    c: Candidacy,
    election: string,
    candidateId: string,
    leaseMs: number,
    offset: number,
    until: number,
  ): Promise<void> {
    const prefix = nodePrefix(this.queue.path(election), c.guid, candidateId);
    // Set before sending: if the answer is lost, the next campaign looks for the guid.
    c.created = true;
    try {
      // The data records the longest lease the node's holder will be granted (the lease asked
      // for, within what the session allows, see `ElectionQueue.grant`): what a fence must wait
      // if an admin deletes this node while it leads.
      await this.queue.session.run<string>(handle, until, 'join election', (client, done) => {
        c.maxLeaseMs = Math.max(1, Math.min(leaseMs, Math.floor((client.getSessionTimeout() * 2) / 3)));
        client.create(
          prefix,
          // The floor's offset as now read: the token this node leads with unless the floor is
          // raised before it confirms (the confirmation then records the new one).
          nodeData(candidateId, c.maxLeaseMs, offset, c.value),
          this.queue.session.acl(),
          CreateMode.EPHEMERAL_SEQUENTIAL,
          (e, p) => done(e, p),
        );
      });
    } catch (err) {
      // The election node was deleted between the list and the create: the next round makes it.
      if (zkCode(err) !== Exception.NO_NODE) throw err;
      c.created = false;
    }
  }

  /**
   * Deletes every node of `candidateId` in `queue` except `keep` that belongs to our session: the
   * candidacy's own guid (a create retried after its answer was lost), or another guid whose
   * ephemeralOwner is our session (a node created under a candidacy record that was since
   * dropped), or, for an instance id, a node of an earlier session of ours. Nodes of a bare
   * candidate id owned by another session (another process using the same id) are left alone. Resolves with how many were deleted (already gone counts).
   *
   * We keep the node the candidacy knows and delete the others rather than adopt the oldest: a
   * stray's czxid may be a token this candidate already led with in a term it gave up (its
   * record was dropped by release), and a new term must get a token strictly greater than every
   * earlier one. Deleting is always safe: heads' czxids only grow (a new head was either behind
   * the old one or created after it went), so whoever leads next has a greater token.
   */
  async deleteStrays(
    handle: SessionHandle,
    c: Candidacy,
    election: string,
    candidateId: string,
    queue: CandidateNode[],
    keep: string | null,
    until: number,
  ): Promise<number> {
    const others = queue.filter((n) => n.candidateId === candidateId && n.name !== keep);
    if (others.length === 0) return 0;
    const removed = await Promise.all(
      others.map(async (n) => {
        const path = this.queue.path(election, n.name);
        if (n.guid !== c.guid) {
          const stat = await this.queue.exists(handle, path, until);
          // An instance id (candidate id + nonce) belongs to this one Elector: its node in another
          // session is one this candidacy left behind when that session was replaced, and would
          // head the queue, naming us leader without a lease, until the server expires it.
          if (!this.queue.ownedBy(stat, handle) && candidateOf(candidateId) === candidateId) return false;
        }
        await this.queue.remove(handle, path, until);
        return true;
      }),
    );
    return removed.filter(Boolean).length;
  }

  /**
   * `release` once it has its turn: deletes the candidacy's node (with a token, only if it is that
   * term's) and every stray of the candidate in our session, then forgets the candidacy.
   */
  async withdraw(election: string, candidateId: string, token: number | null | undefined, until: number): Promise<void> {
    const k = candidacyKey(election, candidateId);
    const c = this.byKey.get(k);
    if (!c) return;
    // With a token, only that term: a newer node of ours is a candidacy we did not give up.
    if (token != null && c.node && c.node.token !== token) return;
    const session = this.queue.session;
    const handle = session.current();
    if (c.node && session.isCurrent(c.node.handle)) {
      // The leader's node first: the successor is woken by this delete, not by the sweep.
      await this.queue.remove(handle, c.node.path, until);
    }
    // Withdraw the whole candidacy: a create whose answer never came, or any stray of this
    // candidate in our session, would otherwise stay in the queue (maybe at its head) for
    // as long as the session lives.
    const queue = await this.queue.list(handle, election, until);
    await this.deleteStrays(handle, c, election, candidateId, queue, null, until);
    if (this.byKey.get(k) === c) this.byKey.delete(k);
  }
}
