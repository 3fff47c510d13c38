import { performance } from 'node:perf_hooks';
import { CreateMode, Event, Exception, type Client, type Stat } from 'node-zookeeper-client';
import {
  ConclaveError,
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  candidateOf,
  assertLeaderValue,
  assertPositiveInteger,
  toBackendError,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';
import { TickBatcher } from '@conclave/core/internal';
import {
  candidateQueue,
  fenceNames,
  fencePrefix,
  fenceWaitOf,
  maxLeaseOf,
  newGuid,
  nodeData,
  nodePrefix,
  offsetOf,
  parseOffset,
  valueOf,
  withOffset,
  type CandidateNode,
} from './zookeeper-nodes';
import { resolveZookeeperOptions, type ZookeeperBackendOptions } from './zookeeper-options';
import { watchChildren } from './zookeeper-leader-watch';
import { zkCode } from './zookeeper-client-util';
import { RequestTimeoutError, ZookeeperSession, type SessionHandle } from './zookeeper-session';
import { ConnectionRefusedError } from './zookeeper-refusal';

const KIND = 'zookeeper';
/** Rounds of "list, then act" a call makes before giving up on a queue that keeps changing. */
const MAX_ROUNDS = 8;
/**
 * The longest lease a deleted node's holder may hold when its node does not record it (created by
 * an older version): two thirds of 40 s, ZooKeeper's default maxSessionTimeout (20 ticks of 2 s).
 */
const UNKNOWN_LEASE_MS = Math.floor((40_000 * 2) / 3);
/**
 * The highest token floor accepted: tokens are czxid + offset, and half the safe integers leave
 * the czxids (epoch << 32 | counter) room for 2^20 leader epochs above it.
 */
const MAX_FLOOR = Math.floor(Number.MAX_SAFE_INTEGER / 2);

/** A fence a head found, and what confirming that it leads must delete. */
interface FenceCheck {
  /** ms until every fence has been waited out on our clock; 0 when all have. */
  waitMs: number;
  /** Paths of the fences to delete with the confirmation. */
  paths: string[];
}

/** What this process knows of one candidate's node in one election. */
interface Candidacy {
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

interface RenewItem {
  handle: SessionHandle;
  path: string;
  /** The node's czxid: tells it apart from a later node of the same name (there is none, but cheap). */
  czxid: number;
  until: number;
}

/** Our own candidate node, as last read. */
interface OwnNode {
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
   * its token (a later raise of the floor does not change it, see `confirmHead`).
   */
  confirmed: boolean;
}

/** The election's token offset and the election node's version it was read at. */
interface Floor {
  version: number;
  offset: number;
}

/**
 * Leader election on ZooKeeper with the ephemeral-sequential recipe: every candidate
 * creates one ephemeral-sequential node under `<root>/<election>`, the lowest sequence leads, and
 * each follower watches only its predecessor, so a departure wakes one candidate, not the herd.
 *
 * - Token: the leading node's czxid (see the README for why not the sequence), plus the offset
 *   of the token floor its term started with (see `raiseTokenFloor`; 0 unless raised).
 * - Lease: a leader's node lives as long as its session, so a lease is granted for at most two
 *   thirds of the negotiated session timeout, counted from when the request was sent; `renew` is
 *   one `multi` of `check` ops (one round trip for all elections renewed in the same turn) that
 *   proves the session is alive and the node still there.
 * - Push is reliable: a candidate's watch fires when its predecessor or its own node goes, and on
 *   every session event.
 */
export class ZookeeperBackend implements ElectionBackend {
  readonly kind = KIND;
  /** What every ZookeeperBackend declares (known before any connection). */
  static readonly capabilities: BackendCapabilities = Object.freeze({
    listCandidates: true,
    push: 'reliable' as const,
    leaderPush: 'reliable' as const,
    tokenFloor: true,
    // The value and the term's start are on the leader's node; a lease is its session's, which
    // has no renewal time or end the server would tell, and tokens (czxids) do not count terms.
    leaderMetadata: Object.freeze({ value: true, since: true, renewedAt: false, leaseEndsAt: false, transitions: false }),
  });
  readonly capabilities: BackendCapabilities = ZookeeperBackend.capabilities;

  private readonly root: string;
  private readonly requestTimeoutMs: number;
  private readonly session: ZookeeperSession;
  private readonly candidacies = new Map<string, Candidacy>();
  /**
   * Per candidate (election + id): the end of the last `campaign`/`release` queued for it. Those
   * calls run one at a time, in call order, even when a caller stopped waiting for one (see
   * `serialized`).
   */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly listeners = new Map<string, Set<() => void>>();
  /** The stop functions of `watchLeader` subscriptions still open. */
  private readonly observers = new Set<() => void>();
  private readonly renewals: TickBatcher<RenewItem, boolean>;
  /** Fence path → its czxid and when this process first saw it (performance.now()). */
  private readonly fencesSeen = new Map<string, { czxid: number; seenAt: number }>();
  /** Election → the token floor last read (see `floor`). */
  private readonly floors = new Map<string, Floor>();
  private readonly unsubscribeSession: () => void;
  private closed = false;

  /** Validates options (INVALID_OPTIONS, INVALID_URL, INVALID_NAME); does no I/O. */
  constructor(options: ZookeeperBackendOptions) {
    const resolved = resolveZookeeperOptions(options);
    this.root = resolved.root;
    this.requestTimeoutMs = resolved.requestTimeoutMs;
    this.session = new ZookeeperSession(resolved);
    this.renewals = new TickBatcher((items) => this.renewBatch(items), 500);
    this.unsubscribeSession = this.session.onEvent((event) => {
      if (event === 'expired') {
        // Every node of the old session is gone: no candidacy of ours exists any more.
        for (const c of this.candidacies.values()) this.forgetNode(c);
      }
      // A session event may make anyone leader (or not): wake every watcher.
      for (const key of this.listeners.keys()) this.notify(key);
    });
  }

  /** A dead candidate's node stays, shown as leader, until its session expires. */
  staleLeaderMs(): number {
    return this.session.timeoutMs();
  }

  async campaign({ election, candidateId, leaseMs, value }: CampaignRequest): Promise<CampaignResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    if (value !== undefined) assertLeaderValue(value, KIND, election);
    const idle = ![...this.candidacies.values()].some((c) => c.created || c.node !== null);
    this.session.adoptLease(leaseMs, idle, election);
    const sentAt = performance.now();
    const until = sentAt + this.requestTimeoutMs;
    try {
      return await this.serialized(key(election, candidateId), until, 'campaign', () =>
        this.campaignRounds(election, candidateId, leaseMs, sentAt, until, value),
      );
    } catch (err) {
      throw this.toError(err, election, 'campaign');
    }
  }

  /** `campaign` once it has its turn (no other campaign or release of this candidate running). */
  private async campaignRounds(
    election: string,
    candidateId: string,
    leaseMs: number,
    calledAt: number,
    until: number,
    value: string | undefined,
  ): Promise<CampaignResult> {
    const c = this.candidacy(election, candidateId);
    // Recorded on the node when it is created; a node already there keeps the value it has.
    c.value = value;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const handle = this.session.current();
      if (c.node && !this.session.isCurrent(c.node.handle)) this.forgetNode(c);
      const queue = await this.queue(handle, election, until, true);
      let index = c.node
        ? queue.findIndex((n) => n.name === c.node!.name)
        : c.created
          ? queue.findIndex((n) => n.guid === c.guid)
          : -1;
      if (index < 0) {
        // Never created, or deleted by forceLeader/clearLeader: join at the back of the queue.
        if (c.node) this.forgetNode(c);
        const floor = await this.floor(handle, election, queue.electionVersion, until);
        await this.createNode(handle, c, election, candidateId, leaseMs, floor.offset, until);
        continue;
      }
      const mine = queue[index]!;
      if (
        index === 0 &&
        c.node !== null &&
        c.node.name === mine.name &&
        c.ownWatched &&
        c.node.handle.client === handle.client &&
        this.session.isCurrent(c.node.handle) &&
        !queue.some((n) => n.candidateId === candidateId && n.name !== mine.name)
      ) {
        // Fast path (a follower whose predecessor, the head, went): the list just read puts our
        // node first, and our own read in this session already checked its ephemeralOwner
        // and czxid (its watch is still armed). Only the quorum can tell that it is still there.
        const [fences, floor] = await Promise.all([
          this.fences(handle, election, queue.fences, until),
          this.floor(handle, election, queue.electionVersion, until),
        ]);
        if (fences.waitMs > 0) return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: fences.waitMs };
        const lease = await this.confirmHead(handle, c, election, leaseMs, calledAt, until, fences.paths, floor);
        if (lease === null) continue;
        return { role: 'leader', token: lease.token, leaseMs: lease.leaseMs };
      }
      // Any other node of this candidate in our session is a stray (a create whose answer was
      // lost, or one made by a call its caller had given up on): it would hold a place in the
      // queue, possibly the head, for the whole session. Delete it and look again.
      if ((await this.deleteStrays(handle, c, election, candidateId, queue, mine.name, until)) > 0) continue;
      const minePath = this.path(election, mine.name);
      if (index === 0) {
        // The own-node watch tells a leader at once that its node went (clear, force, expiry).
        const own = await this.readNode(handle, minePath, until, c.watcher);
        if (!own || !this.ownedBy(own.stat, handle)) {
          // Gone, or left by another (expired) session that a lagging server still shows:
          // never lead on a node that is not ours (Curator's LeaderLatch check).
          this.forgetNode(c);
          continue;
        }
        this.adopt(c, mine.name, minePath, own, handle);
        c.ownWatched = true;
        const [fences, floor] = await Promise.all([
          this.fences(handle, election, queue.fences, until),
          this.floor(handle, election, queue.electionVersion, until),
        ]);
        if (fences.waitMs > 0) return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: fences.waitMs };
        const lease = await this.confirmHead(handle, c, election, leaseMs, calledAt, until, fences.paths, floor);
        if (lease === null) continue;
        return { role: 'leader', token: lease.token, leaseMs: lease.leaseMs };
      }
      const leader = queue[0]!;
      const predecessor = queue[index - 1]!;
      const [own, before, lead] = await Promise.all([
        this.readNode(handle, minePath, until, c.watcher),
        // Watch only the predecessor: when it goes, only we are woken.
        this.readNode(handle, this.path(election, predecessor.name), until, c.watcher),
        index > 1 ? this.readNode(handle, this.path(election, leader.name), until) : Promise.resolve(null),
      ]);
      if (!own || !this.ownedBy(own.stat, handle)) {
        this.forgetNode(c);
        continue;
      }
      this.adopt(c, mine.name, minePath, own, handle);
      c.ownWatched = true;
      if (!before) continue; // the predecessor left meanwhile: look again
      const leaderNode = index === 1 ? before : lead;
      return {
        role: 'follower',
        leaderId: leader.candidateId,
        token: leaderNode ? termToken(czxid(leaderNode.stat), offsetOf(leaderNode.data)) : null,
      };
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'the candidate queue kept changing; try again', {
      backend: KIND,
      election,
    });
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
    const there = await this.commit(handle, until, 'confirm leadership', (tx) => {
      if (rewrite) tx.setData(node.path, data, node.version);
      else tx.check(node.path, node.version);
      if (!node.confirmed) tx.check(this.path(election), floor.version);
      for (const fence of fences) tx.remove(fence, -1);
    });
    if (!there) {
      // Our node, a fence or the floor changed. The failed multi was ordered by the quorum and a
      // session's answers come in order, so this read sees at least what made it fail.
      if (c.node === node && fences.length === 0) {
        const now = await this.readNode(handle, node.path, until);
        if (!now || !this.ownedBy(now.stat, handle) || czxid(now.stat) !== node.czxid) this.forgetNode(c);
      }
      return null;
    }
    for (const fence of fences) this.fencesSeen.delete(fence);
    if (!node.confirmed) {
      node.confirmed = true;
      node.offset = rewrite ? floor.offset : node.offset;
      node.token = termToken(node.czxid, node.offset);
      if (rewrite) {
        node.data = data;
        node.version += 1;
        // Writing the data fired our own watch: arm it again, or a leader would learn that its
        // node went only at its next renewal.
        const again = await this.readNode(handle, node.path, until, c.watcher).catch(() => null);
        if (c.node === node) {
          if (again && this.ownedBy(again.stat, handle) && again.stat.version === node.version) c.ownWatched = true;
          else this.notify(c.key);
        }
      }
    }
    return {
      token: node.token,
      leaseMs: Math.max(1, this.grant(handle, leaseMs, c.maxLeaseMs) - Math.ceil(confirmAt - calledAt)),
    };
  }

  /**
   * Records our node as just read. The same node already confirmed in this session keeps its
   * term (token, confirmed); anything else is taken as read.
   */
  private adopt(c: Candidacy, name: string, path: string, read: { data: Buffer | null; stat: Stat }, handle: SessionHandle): void {
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
   * The election's token offset. `version` is the election node's version the caller's listing
   * saw: when this process already read the floor at that version, no request is made.
   */
  private async floor(handle: SessionHandle, election: string, version: number, until: number): Promise<Floor> {
    const cached = this.floors.get(election);
    if (cached && cached.version === version) return cached;
    const read = await this.readNode(handle, this.path(election), until);
    // The election node is created before any candidate node, and never deleted.
    const floor = read ? { version: read.stat.version, offset: parseOffset(read.data?.toString('utf8')) } : { version: -1, offset: 0 };
    if (read) this.floors.set(election, floor);
    return floor;
  }

  async renew({ election, candidateId, token, leaseMs }: RenewRequest): Promise<RenewResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    this.ensureOpen(election);
    const sentAt = performance.now();
    const c = this.candidacies.get(key(election, candidateId));
    // Never creates anything: without our node in the live session there is no lease to extend.
    // The term is the node: matched by the token it was given (czxid + the offset of its term),
    // never by one recomputed from a floor that may have been raised since.
    if (!c?.node || c.node.token !== token) return { held: false, leaderId: null };
    if (!this.session.isCurrent(c.node.handle)) {
      this.forgetNode(c);
      return { held: false, leaderId: null };
    }
    const node = c.node;
    try {
      const until = sentAt + this.requestTimeoutMs;
      const held = await this.renewals.submit({ handle: node.handle, path: node.path, czxid: node.czxid, until });
      if (!held) {
        if (c.node === node) this.forgetNode(c);
        return { held: false, leaderId: await this.headOfQueue(node.handle, election, until) };
      }
      return { held: true, leaseMs: this.grant(node.handle, leaseMs, c.maxLeaseMs) };
    } catch (err) {
      throw this.toError(err, election, 'renew');
    }
  }

  /**
   * Who is first in the queue now (its full instance id, so that the core can tell another
   * instance of the same candidate from itself), or null when unknown: a best effort after a
   * renewal found our node gone, never an error.
   */
  private async headOfQueue(handle: SessionHandle, election: string, until: number): Promise<string | null> {
    if (!this.session.isCurrent(handle)) return null;
    try {
      return (await this.queue(handle, election, until))[0]?.candidateId ?? null;
    } catch {
      return null;
    }
  }

  async release({ election, candidateId, token }: ReleaseRequest): Promise<void> {
    this.validate(election, candidateId);
    this.ensureOpen(election);
    const k = key(election, candidateId);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      await this.serialized(k, until, 'release', async () => {
        const c = this.candidacies.get(k);
        if (!c) return;
        // With a token, only that term: a newer node of ours is a candidacy we did not give up.
        if (token != null && c.node && c.node.token !== token) return;
        const handle = this.session.current();
        if (c.node && this.session.isCurrent(c.node.handle)) {
          // The leader's node first: the successor is woken by this delete, not by the sweep.
          await this.remove(handle, c.node.path, until);
        }
        // Withdraw the whole candidacy: a create whose answer never came, or any stray of this
        // candidate in our session, would otherwise stay in the queue (maybe at its head) for
        // as long as the session lives.
        const queue = await this.queue(handle, election, until);
        await this.deleteStrays(handle, c, election, candidateId, queue, null, until);
        if (this.candidacies.get(k) === c) this.candidacies.delete(k);
      });
    } catch (err) {
      throw this.toError(err, election, 'release');
    }
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const handle = this.session.current();
        const queue = await this.queue(handle, election, until);
        const leader = queue[0];
        if (!leader) return null;
        const read = await this.readNode(handle, this.path(election, leader.name), until);
        // The token its node records: the offset of its term once it confirmed (a head that has
        // not yet confirmed records the floor it was created under).
        if (read) return leaderInfo(leader.candidateId, read);
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'the candidate queue kept changing; try again', {
        backend: KIND,
        election,
      });
    } catch (err) {
      throw this.toError(err, election, 'getLeader');
    }
  }

  /**
   * Makes `candidateId` lead by deleting, in one transaction, every node ahead of its first node,
   * and creating a fence (see zookeeper-nodes.ts): the candidate, now head, leads with its own
   * node's token (czxid + offset, greater than every earlier token) once the longest lease a
   * deleted node's holder could still believe in has passed. The deleted leader learns it at its
   * next renewal (its node is gone, which the renewal's transaction checks on the quorum), so the
   * two terms never overlap; the deleted candidates rejoin at the back. ZooKeeper cannot create an ephemeral node
   * for another session, so a candidate that is not campaigning cannot be forced:
   * `NOT_SUPPORTED`. The lease is its session's, so `leaseMs` is validated and otherwise ignored.
   * Forcing the current leader changes nothing and returns its token.
   */
  async forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    this.validate(election);
    assertCandidateId(candidateId, KIND, election);
    if (leaseMs !== undefined) assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const handle = this.session.current();
        const queue = await this.queue(handle, election, until);
        // The candidate's first node, whichever of its instances (Electors) made it.
        const index = queue.findIndex((n) => candidateOf(n.candidateId) === candidateId);
        if (index < 0) {
          throw new ConclaveError(
            'NOT_SUPPORTED',
            `cannot force candidate ${JSON.stringify(candidateId)}: it is not campaigning (ZooKeeper can only promote a candidate that has a node in the queue)`,
            { backend: KIND, election },
          );
        }
        const target = this.path(election, queue[index]!.name);
        if (index > 0) {
          const removed = await this.removeFenced(handle, election, queue.slice(0, index), target, until);
          if (!removed) continue; // someone ahead left (or the target did) meanwhile: look again
        }
        const read = await this.readNode(handle, target, until);
        if (!read) continue;
        // A target that was not head has not led on this node yet: it will confirm with the
        // floor as it is now (or higher), not the one it recorded when it joined.
        const floor = index > 0 ? (await this.floor(handle, election, -1, until)).offset : 0;
        return { candidateId, token: termToken(czxid(read.stat), Math.max(offsetOf(read.data), floor)) };
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'the candidate queue kept changing; try again', {
        backend: KIND,
        election,
      });
    } catch (err) {
      throw this.toError(err, election, 'forceLeader');
    }
  }

  /**
   * Raises the election's token offset (the data of the election node, see zookeeper-nodes.ts) so
   * that every term confirmed after this resolves gets a token above `token`. Such a term leads on
   * a node that exists now or is created later, so the offset is `token - L + 1`, L being a lower
   * bound of those nodes' czxids: the smallest czxid of the candidate nodes listed after the
   * election node was read, and its pzxid + 1 for the nodes created after that read (every later
   * zxid is greater). The write is checked against the version read, so a concurrent raise makes
   * it look again, and it changes that version, so a head that read the floor before it and
   * confirms after it fails its confirmation and reads the floor again. The offset only grows,
   * so later terms' tokens (later czxid, same or larger offset) still increase. The running term
   * keeps its token (its node records its offset).
   */
  async raiseTokenFloor(election: string, token: number): Promise<void> {
    this.validate(election);
    this.ensureOpen(election);
    if (!Number.isSafeInteger(token) || token < 0) {
      throw new ConclaveError('INVALID_OPTIONS', `token floor must be a non-negative integer, got ${token}`, { backend: KIND, election });
    }
    if (token > MAX_FLOOR) {
      // A token is czxid + offset: leave the czxids room to grow without leaving safe integers.
      throw new ConclaveError('INVALID_OPTIONS', `token floor ${token} is above ${MAX_FLOOR}, the highest ZooKeeper can keep tokens above`, {
        backend: KIND,
        election,
      });
    }
    const until = performance.now() + this.requestTimeoutMs;
    const electionPath = this.path(election);
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const handle = this.session.current();
        const read = await this.readNode(handle, electionPath, until);
        if (!read) {
          await this.queue(handle, election, until, true); // creates the election node
          continue;
        }
        const offset = parseOffset(read.data?.toString('utf8'));
        if (offset >= token) return; // every czxid is at least 1
        const queue = await this.queue(handle, election, until);
        const czxids = await Promise.all(
          queue.map(async (n) => {
            const stat = await this.exists(handle, this.path(election, n.name), until);
            return stat ? czxid(stat) : Infinity; // gone: it will never lead
          }),
        );
        const lowest = Math.min(zxidOf(read.stat.pzxid) + 1, ...czxids);
        const wanted = token - lowest + 1;
        if (wanted <= offset) return;
        const written = await this.session
          .run<void>(handle, until, 'raise token floor', (client, done) =>
            client.setData(electionPath, Buffer.from(String(wanted)), read.stat.version, (err) => done(err)),
          )
          .then(
            () => true,
            (err: unknown) => {
              if (zkCode(err) === Exception.BAD_VERSION || zkCode(err) === Exception.NO_NODE) return false;
              throw err;
            },
          );
        this.floors.delete(election);
        if (written) return;
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'the token floor kept changing; try again', { backend: KIND, election });
    } catch (err) {
      throw this.toError(err, election, 'raiseTokenFloor');
    }
  }

  /**
   * Deletes the leader's node and leaves a fence, so the next candidate leads only once the
   * deleted leader's lease could have ended. The election node is never deleted.
   */
  async clearLeader(election: string): Promise<void> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const handle = this.session.current();
        const queue = await this.queue(handle, election, until);
        if (!queue[0]) return;
        if (await this.removeFenced(handle, election, [queue[0]], null, until)) return;
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'the candidate queue kept changing; try again', {
        backend: KIND,
        election,
      });
    } catch (err) {
      throw this.toError(err, election, 'clearLeader');
    }
  }

  /**
   * One transaction: delete `nodes`, create a fence that waits the longest lease any of their
   * holders can be granted, and (for force) check that `target` is still there. False when a node
   * went meanwhile (look again). A node gone before its data was read is left out of the wait: it
   * can no longer renew, and it was not ahead of the head when the head confirmed.
   */
  private async removeFenced(
    handle: SessionHandle,
    election: string,
    nodes: CandidateNode[],
    target: string | null,
    until: number,
  ): Promise<boolean> {
    const leases = await Promise.all(
      nodes.map(async (n) => {
        const data = await this.getData(handle, this.path(election, n.name), until);
        return data === null ? 0 : (maxLeaseOf(data) ?? UNKNOWN_LEASE_MS);
      }),
    );
    const waitMs = Math.max(0, ...leases);
    return this.commit(handle, until, target === null ? 'clearLeader' : 'forceLeader', (tx) => {
      for (const n of nodes) tx.remove(this.path(election, n.name), -1);
      tx.create(fencePrefix(this.path(election)), Buffer.from(String(waitMs)), this.session.acl(), CreateMode.PERSISTENT_SEQUENTIAL);
      if (target !== null) tx.check(target, -1);
    });
  }

  /**
   * The fences of the election, as a head about to lead sees them: how long it must still wait
   * (each fence's wait counted on this process's clock from when it first saw that fence, told
   * apart by its czxid), and which fences to delete when it confirms.
   */
  private async fences(handle: SessionHandle, election: string, names: string[], until: number): Promise<FenceCheck> {
    if (names.length === 0) return { waitMs: 0, paths: [] };
    const now = performance.now();
    let waitMs = 0;
    const paths: string[] = [];
    for (const name of names) {
      const path = this.path(election, name);
      const read = await this.readNode(handle, path, until);
      if (read === null) continue; // deleted meanwhile by the head that confirmed
      const id = czxid(read.stat);
      let seen = this.fencesSeen.get(path);
      if (!seen || seen.czxid !== id) {
        seen = { czxid: id, seenAt: now };
        this.fencesSeen.set(path, seen);
      }
      waitMs = Math.max(waitMs, seen.seenAt + fenceWaitOf(read.data, UNKNOWN_LEASE_MS) - now);
      paths.push(path);
    }
    return { waitMs: waitMs > 0 ? Math.ceil(waitMs) : 0, paths };
  }

  async listCandidates(election: string): Promise<string[]> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      const queue = await this.queue(this.session.current(), election, until);
      return [...new Set(queue.map((n) => candidateOf(n.candidateId)))];
    } catch (err) {
      throw this.toError(err, election, 'listCandidates');
    }
  }

  watch(election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    if (this.closed) return () => {};
    const k = key(election, candidateId);
    let set = this.listeners.get(k);
    if (!set) {
      set = new Set();
      this.listeners.set(k, set);
    }
    // Each subscription gets its own function so one candidate can watch twice.
    const listener = () => onChange();
    set.add(listener);
    return () => {
      const current = this.listeners.get(k);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(k);
    };
  }

  /**
   * Reliable: a children watch on the election node, armed again on each event and on every
   * session event (see zookeeper-leader-watch.ts). A change of the head's data (a token floor
   * raised under a head that has not confirmed yet) is not announced; its term is.
   */
  watchLeader(election: string, onChange: () => void): () => void {
    this.validate(election);
    if (this.closed) return () => {};
    const stop = watchChildren({
      session: this.session,
      path: this.path(election),
      requestTimeoutMs: this.requestTimeoutMs,
      createNode: async (handle, until) => {
        await this.queue(handle, election, until);
      },
      onChange,
    });
    this.observers.add(stop);
    return () => {
      this.observers.delete(stop);
      stop();
    };
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeSession();
    for (const stop of [...this.observers]) stop();
    this.observers.clear();
    this.listeners.clear();
    this.candidacies.clear();
    this.floors.clear();
    await this.session.close();
  }

  // ---- helpers --------------------------------------------------------------------------

  /**
   * Validates an election name and, when given, the id of a campaign, renew, release or watch:
   * an instance id (`<candidate id> <nonce>`) or a bare candidate id. A rest parameter, not an
   * optional one: an explicit `undefined` id must be refused too.
   */
  private validate(election: string, ...instance: [instanceId?: string]): void {
    assertElectionName(election, KIND);
    if (instance.length > 0) assertInstanceId(instance[0], KIND, election);
  }

  private ensureOpen(election: string): void {
    if (this.closed) throw new ConclaveError('CLOSED', 'the ZooKeeper backend is closed', { backend: KIND, election });
  }

  private candidacy(election: string, candidateId: string): Candidacy {
    const k = key(election, candidateId);
    let c = this.candidacies.get(k);
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
            // The predecessor wrote its data (it became leader): nothing for us to do but watch
            // it again, so that only its end wakes us.
            this.rewatch(k, path, candidacy);
            return;
          }
          this.notify(k);
        },
      };
      c = candidacy;
      this.candidacies.set(k, c);
    }
    return c;
  }

  /** Arms the candidacy's watch on `path` again; wakes the candidate if it is gone or cannot tell. */
  private rewatch(k: string, path: string, c: Candidacy): void {
    let handle: SessionHandle;
    try {
      handle = this.session.current();
    } catch {
      return; // closed
    }
    this.exists(handle, path, performance.now() + this.requestTimeoutMs, c.watcher).then(
      (stat) => {
        if (stat === null) this.notify(k);
      },
      () => this.notify(k),
    );
  }

  /** Our node is gone (or was never ours): the next create uses a fresh guid. */
  private forgetNode(c: Candidacy): void {
    c.node = null;
    c.ownWatched = false;
    c.guid = newGuid();
    c.created = false;
  }

  private notify(k: string): void {
    const set = this.listeners.get(k);
    if (!set) return;
    // Delivered on a later turn so that no caller re-enters itself.
    for (const listener of [...set]) setImmediate(listener);
  }

  private path(election: string, child?: string): string {
    return child === undefined ? `${this.root}/${election}` : `${this.root}/${election}/${child}`;
  }

  /**
   * Lease granted, ms from when the request was sent: never more than two thirds of the
   * negotiated session timeout. A session lives at least its timeout after the server last heard
   * from it, but in an ensemble a follower reports client activity to the leader only every half
   * tick, and ticks can be as long as half the timeout; two thirds is also where ZooKeeper's own
   * client gives a silent connection up. Never more than the node records either (`cap`, see
   * `createNode`).
   */
  private grant(handle: SessionHandle, leaseMs: number, cap: number | null = null): number {
    const sessionMs = this.session.negotiatedTimeoutMs(handle);
    return Math.max(1, Math.min(leaseMs, Math.floor((sessionMs * 2) / 3), cap ?? Infinity));
  }

  private ownedBy(stat: Stat | null, handle: SessionHandle): boolean {
    return stat !== null && Buffer.from(stat.ephemeralOwner).equals(handle.client.getSessionId());
  }

  /**
   * The election's candidate nodes in queue order, with the names of its fences; creates the
   * election node when missing. A missing chroot is created only for a call that writes
   * (`makeChroot`); for a read it means an empty election.
   */
  private async queue(
    handle: SessionHandle,
    election: string,
    until: number,
    makeChroot = false,
  ): Promise<CandidateNode[] & { fences: string[]; electionVersion: number }> {
    const electionPath = this.path(election);
    try {
      const { children, version } = await this.session.run<{ children: string[]; version: number }>(
        handle,
        until,
        'list candidates',
        (client, done) => client.getChildren(electionPath, (err, list, stat) => done(err, { children: list, version: stat?.version ?? -1 })),
      );
      return Object.assign(candidateQueue(children), { fences: fenceNames(children), electionVersion: version });
    } catch (err) {
      if (zkCode(err) !== Exception.NO_NODE) throw err;
      const empty = Object.assign([] as CandidateNode[], { fences: [] as string[], electionVersion: -1 });
      const mkdirp = () =>
        this.session.run<string>(handle, until, 'create election node', (client, done) =>
          client.mkdirp(electionPath, this.session.acl(), CreateMode.PERSISTENT, (e, p) => done(e, p)),
        );
      try {
        await mkdirp();
      } catch (mkdirpErr) {
        // Even the root cannot be made: the chroot the session lives under does not exist.
        if (zkCode(mkdirpErr) !== Exception.NO_NODE) throw mkdirpErr;
        if (!makeChroot) return empty;
        if (!(await this.session.ensureChroot(until))) {
          // A client passed in: its chroot is out of our reach (a chrooted session cannot
          // create it, and we do not know the servers to open another).
          throw new ConclaveError(
            'BACKEND_ERROR',
            'the chroot of the ZooKeeper client passed in does not exist: create it first (a backend given `connect` creates its chroot)',
            { backend: KIND, election, cause: mkdirpErr },
          );
        }
        await mkdirp();
      }
      return empty;
    }
  }

  private async getData(handle: SessionHandle, path: string, until: number): Promise<Buffer | null> {
    return (await this.readNode(handle, path, until))?.data ?? null;
  }

  /**
   * A node's data and stat; null when it does not exist. With `watcher`, a data watch (it fires
   * when the node is deleted or its data changes; none is left on a node that does not exist).
   */
  private async readNode(
    handle: SessionHandle,
    path: string,
    until: number,
    watcher?: (event?: { getPath?: () => string }) => void,
  ): Promise<{ data: Buffer | null; stat: Stat } | null> {
    try {
      return await this.session.run<{ data: Buffer | null; stat: Stat }>(handle, until, 'read node', (client, done) => {
        const cb = (err: unknown, data: Buffer | undefined, stat: Stat) => done(err, { data: data ?? null, stat });
        if (watcher) client.getData(path, watcher, cb);
        else client.getData(path, cb);
      });
    } catch (err) {
      if (zkCode(err) === Exception.NO_NODE) return null;
      throw err;
    }
  }

  private async createNode(
    handle: SessionHandle,
    c: Candidacy,
    election: string,
    candidateId: string,
    leaseMs: number,
    offset: number,
    until: number,
  ): Promise<void> {
    const prefix = nodePrefix(this.path(election), c.guid, candidateId);
    // Set before sending: if the answer is lost, the next campaign looks for the guid.
    c.created = true;
    try {
      // The data records the longest lease the node's holder will be granted (the lease asked
      // for, within what the session allows, see `grant`): what a fence must wait if an admin
      // deletes this node while it leads.
      await this.session.run<string>(handle, until, 'join election', (client, done) => {
        c.maxLeaseMs = Math.max(1, Math.min(leaseMs, Math.floor((client.getSessionTimeout() * 2) / 3)));
        client.create(
          prefix,
          // The floor's offset as now read: the token this node leads with unless the floor is
          // raised before it confirms (the confirmation then records the new one).
          nodeData(candidateId, c.maxLeaseMs, offset, c.value),
          this.session.acl(),
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
   * Runs `fn` once every earlier `campaign`/`release` of the same candidate (key `k`) has finished.
   *
   * The core runs one call per Elector at a time, but it stops waiting for a call after its own
   * timeout (a campaign after `leaseMs - safetyMarginMs`, a release after `leaseMs`), which is
   * shorter than `requestTimeoutMs`, and our requests wait for the connection to come back: the
   * call it gave up on is still running here when it makes the next one. Two such calls on one
   * candidacy interleave badly (a release deleting our node and forgetting the candidacy while a
   * campaign re-creates a node under it leaves that node, unknown to anyone, in the queue for
   * the whole session), so they take turns. Waiting for the turn counts against `until`; a call
   * that cannot get it in time fails with BACKEND_UNAVAILABLE having done nothing.
   */
  private async serialized<T>(k: string, until: number, what: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(k);
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // The next call waits for this one, which ends after the previous one even if it gives up.
    const tail = previous ? previous.then(() => finished) : finished;
    this.tails.set(k, tail);
    try {
      if (previous && !(await settlesBy(previous, until))) {
        throw new ConclaveError('BACKEND_UNAVAILABLE', `${what}: an earlier call for this candidate is still running`, {
          backend: KIND,
        });
      }
      return await fn();
    } finally {
      finish();
      if (this.tails.get(k) === tail) this.tails.delete(k);
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
  private async deleteStrays(
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
        const path = this.path(election, n.name);
        if (n.guid !== c.guid) {
          const stat = await this.exists(handle, path, until);
          // An instance id (candidate id + nonce) belongs to this one Elector: its node in another
          // session is one this candidacy left behind when that session was replaced, and would
          // head the queue, naming us leader without a lease, until the server expires it.
          if (!this.ownedBy(stat, handle) && candidateOf(candidateId) === candidateId) return false;
        }
        await this.remove(handle, path, until);
        return true;
      }),
    );
    return removed.filter(Boolean).length;
  }

  private exists(handle: SessionHandle, path: string, until: number, watcher?: () => void): Promise<Stat | null> {
    return this.session.run<Stat | null>(handle, until, 'read candidate node', (client, done) => {
      const cb = (err: unknown, stat: Stat) => done(err, stat ?? null);
      if (watcher) client.exists(path, watcher, cb);
      else client.exists(path, cb);
    });
  }

  /** Deletes a node; a node already gone is not an error. */
  private async remove(handle: SessionHandle, path: string, until: number): Promise<void> {
    try {
      await this.session.run<void>(handle, until, 'delete candidate node', (client, done) =>
        client.remove(path, -1, (err) => done(err)),
      );
    } catch (err) {
      if (zkCode(err) !== Exception.NO_NODE) throw err;
    }
  }

  /** Runs a transaction; resolves false when one of its ops found no node (or a bad version). */
  private async commit(
    handle: SessionHandle,
    until: number,
    what: string,
    build: (tx: ReturnType<Client['transaction']>) => void,
  ): Promise<boolean> {
    try {
      await this.session.run<unknown>(handle, until, what, (client, done) => {
        const tx = client.transaction();
        build(tx);
        tx.commit((err, results) => done(err, results));
      });
      return true;
    } catch (err) {
      const code = zkCode(err);
      if (code === Exception.NO_NODE || code === Exception.BAD_VERSION) return false;
      throw err;
    }
  }

  /**
   * Renews every lease asked for in one event-loop turn with one `multi` of `check` ops: a single
   * round trip that goes through the ensemble's leader, so a stale follower cannot vouch for a
   * node that is gone. If one check fails, each node is looked at on its own (one more round trip).
   */
  private async renewBatch(items: RenewItem[]): Promise<boolean[]> {
    const results = new Array<boolean>(items.length).fill(false);
    const byClient = new Map<SessionHandle['client'], number[]>();
    items.forEach((item, i) => {
      if (!this.session.isCurrent(item.handle)) return; // expired meanwhile: not held
      const list = byClient.get(item.handle.client) ?? [];
      list.push(i);
      byClient.set(item.handle.client, list);
    });
    await Promise.all(
      [...byClient.values()].map(async (indexes) => {
        const first = items[indexes[0]!]!;
        const until = Math.max(...indexes.map((i) => items[i]!.until));
        try {
          const allThere = await this.commit(first.handle, until, 'renew', (tx) => {
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
              const stat = await this.exists(first.handle, items[i]!.path, until);
              results[i] = stat !== null && this.ownedBy(stat, first.handle) && czxid(stat) === items[i]!.czxid;
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

  private toError(err: unknown, election: string, operation: string): ConclaveError {
    if (err instanceof RequestTimeoutError) {
      return new ConclaveError('BACKEND_UNAVAILABLE', `${operation}: ZooKeeper did not answer within ${this.requestTimeoutMs} ms`, {
        backend: KIND,
        election,
        cause: err,
      });
    }
    if (err instanceof ConclaveError) return err;
    if (err instanceof ConnectionRefusedError) {
      return new ConclaveError('BACKEND_UNAVAILABLE', `${operation}: ${err.message}`, { backend: KIND, election, cause: err });
    }
    const code = zkCode(err);
    if (code === undefined) return toBackendError(err, KIND, election);
    const name = String((err as { getName?: () => string }).getName?.() ?? code);
    const unavailable = [Exception.CONNECTION_LOSS, Exception.SESSION_EXPIRED, Exception.OPERATION_TIMEOUT].includes(code);
    return new ConclaveError(unavailable ? 'BACKEND_UNAVAILABLE' : 'BACKEND_ERROR', `ZooKeeper error ${name}`, {
      backend: KIND,
      election,
      cause: err,
    });
  }
}

function key(election: string, candidateId: string): string {
  return `${election}\u0000${candidateId}`;
}

/** A term's token: its node's czxid plus the floor's offset the term started with. */
function termToken(czxid: number, offset: number): number {
  const token = czxid + offset;
  if (!Number.isSafeInteger(token)) {
    throw new ConclaveError('BACKEND_ERROR', `token ${czxid} + ${offset} is not a safe integer`, { backend: KIND });
  }
  return token;
}

/** Whether `promise` settles by `until` (performance.now() ms). */
function settlesBy(promise: Promise<unknown>, until: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, until - performance.now()));
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}

/**
 * The head's `LeaderInfo`. `since` is the node's mtime once its first confirmation wrote it
 * (version > 0, see `confirmHead`): the quorum's clock when the term started. A head not yet
 * confirmed (or confirmed by an earlier build, which did not always write) has no `since`.
 */
function leaderInfo(candidateId: string, read: { data: Buffer | null; stat: Stat }): LeaderInfo {
  const value = valueOf(read.data);
  const since = read.stat.version > 0 ? Number(Buffer.from(read.stat.mtime).readBigInt64BE(0)) : 0;
  return {
    candidateId: candidateOf(candidateId),
    token: termToken(czxid(read.stat), offsetOf(read.data)),
    ...(value === undefined ? {} : { value }),
    ...(since > 0 ? { since } : {}),
  };
}

/**
 * The node's creation zxid as a number. zxid = epoch << 32 | counter: it stays a safe integer
 * while the ensemble has had fewer than 2^21 leader epochs.
 */
function czxid(stat: Stat): number {
  return zxidOf(stat.czxid, 'czxid');
}

function zxidOf(zxid: Buffer, what = 'zxid'): number {
  const value = Buffer.from(zxid).readBigInt64BE(0);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new ConclaveError('BACKEND_ERROR', `${what} ${value} cannot be a token (not a positive safe integer)`, {
      backend: KIND,
    });
  }
  return n;
}
