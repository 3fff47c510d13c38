import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import {
  CampaignSlots,
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  assertTokenFloor,
  candidateOf,
  throwIfGivenUp,
  toBackendError,
  type BackendAdmin,
  type CandidateQueue,
  type ChangeFeed,
  type LeaderFeed,
  type TokenFloor as TokenFloorPart,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type LeaderMetadataKept,
} from '@conclave/core/spi';
import { resolveZookeeperOptions, type ZookeeperBackendOptions } from './zookeeper-options';
import { watchChildren } from './zookeeper-leader-watch';
import { zkCode } from './zookeeper-client-util';
import { conclaveCodeOf, describeZkError } from './zookeeper-error-codes';
import { RequestTimeoutError } from './zookeeper-request-timeout';
import { ZookeeperSession } from './zookeeper-session';
import { ConnectionRefusedError } from './zookeeper-refusal';
import { ElectionQueue } from './zookeeper-queue';
import { MAX_FLOOR, TokenFloor } from './zookeeper-token-floor';
import { Fences } from './zookeeper-fences';
import { Candidacies, candidacyKey, forgetNode } from './zookeeper-candidacy';
import { CandidateTurns } from './zookeeper-turns';
import { CandidateWatchers } from './zookeeper-watchers';
import { Campaigner } from './zookeeper-campaign';
import { RenewalBatcher } from './zookeeper-renewals';
import { ElectionAdmin } from './zookeeper-admin';

const KIND = 'zookeeper';

/**
 * Leader election on ZooKeeper with the ephemeral-sequential recipe: every candidate
 * creates one ephemeral-sequential node under `<root>/<election>`, the lowest sequence leads, and
 * each follower watches its predecessor and the head: a departure from the middle of the queue
 * wakes one candidate, not the herd, and a change of leader wakes each follower once (to name it).
 *
 * - Token: the leading node's czxid (see the README for why not the sequence), plus the offset
 *   of the token floor its term started with (see `raiseTokenFloor`; 0 unless raised).
 * - Lease: a leader's node lives as long as its session, so a lease is granted for at most two
 *   thirds of the negotiated session timeout, counted from when the request was sent; `renew` is
 *   a `multi` of `check` ops (one round trip for all elections renewed in the same turn, in
 *   batches of `RENEWALS_PER_MULTI`) that proves the session is alive and the node still there.
 * - Push is reliable: a candidate's watch fires when its predecessor, the head or its own node
 *   goes, and on every session event.
 */
export class ZookeeperBackend implements ElectionBackend {
  readonly kind = KIND;
  // The value and the term's start are on the leader's node; a lease is its session's, which
  // has no renewal time or end the server would tell, and tokens (czxids) do not count terms.
  /** Which leader fields `getLeader()` reports (see `LeaderMetadataKept`). */
  readonly leaderMetadata: LeaderMetadataKept = Object.freeze({ value: true, since: true, renewedAt: false, leaseEndsAt: false, transitions: false });
  readonly admin: BackendAdmin = {
    forceLeader: (election, candidateId, leaseMs) => this.forceLeader(election, candidateId, leaseMs),
    clearLeader: (election) => this.clearLeader(election),
    electionExists: (election) => this.electionExists(election),
  };
  readonly candidates: CandidateQueue = { list: (election) => this.listCandidates(election) };
  /** Reliable: a candidate's watch fires when its predecessor, the head or its own node goes, and on every session event. */
  readonly changes: ChangeFeed = {
    delivery: 'reliable',
    leaseEnds: false,
    watch: (election, candidateId, onChange) => this.watch(election, candidateId, onChange),
  };
  readonly leaderChanges: LeaderFeed = { delivery: 'reliable', watch: (election, onChange) => this.watchLeader(election, onChange) };
  readonly tokenFloor: TokenFloorPart = { raise: (election, token) => this.raiseTokenFloor(election, token), followsClock: false };

  private readonly requestTimeoutMs: number;
  private readonly session: ZookeeperSession;
  private readonly queue: ElectionQueue;
  private readonly floor: TokenFloor;
  private readonly candidacies: Candidacies;
  private readonly turns = new CandidateTurns();
  private readonly slots = new CampaignSlots(KIND);
  private readonly watchers = new CandidateWatchers();
  private readonly campaigner: Campaigner;
  private readonly renewals: RenewalBatcher;
  private readonly electionAdmin: ElectionAdmin;
  /** The stop functions of `leaderChanges` subscriptions still open. */
  private readonly observers = new Set<() => void>();
  private readonly unsubscribeSession: () => void;
  private closed = false;

  /** Validates options (INVALID_OPTIONS, INVALID_URL, INVALID_NAME); does no I/O. */
  constructor(options: ZookeeperBackendOptions) {
    const resolved = resolveZookeeperOptions(options);
    this.requestTimeoutMs = resolved.requestTimeoutMs;
    this.session = new ZookeeperSession(resolved);
    this.queue = new ElectionQueue(this.session, resolved.root);
    this.floor = new TokenFloor(this.queue);
    const fences = new Fences(this.queue);
    const notify = (k: string) => this.watchers.notify(k);
    this.candidacies = new Candidacies(this.queue, this.requestTimeoutMs, notify);
    this.campaigner = new Campaigner(this.queue, this.candidacies, this.floor, fences, notify);
    this.renewals = new RenewalBatcher(this.queue);
    this.electionAdmin = new ElectionAdmin(this.queue, fences, this.floor);
    this.unsubscribeSession = this.session.onEvent((event) => {
      if (event === 'expired') {
        // Every node of the old session is gone: no candidacy of ours exists any more.
        this.candidacies.forgetAllNodes();
      }
      // A session event may make anyone leader (or not): wake every watcher.
      this.watchers.notifyAll();
    });
  }

  /** A dead candidate's node stays, shown as leader, until its session expires. */
  get staleLeaderMs(): number {
    return this.session.timeoutMs();
  }

  async campaign({ election, candidateId, leaseMs, value, signal }: CampaignRequest): Promise<CampaignResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    if (value !== undefined) assertLeaderValue(value, KIND, election);
    throwIfGivenUp(signal, 'campaign', KIND, election);
    // `idle` scans every candidacy: asked only when the session may be replaced (once per backend).
    this.session.adoptLease(leaseMs, () => this.candidacies.idle(), election);
    const sentAt = performance.now();
    const until = sentAt + this.requestTimeoutMs;
    try {
      return await this.turns.serialized(
        candidacyKey(election, candidateId),
        until,
        'campaign',
        async () => {
          // Its turn first (no request is sent waiting for it), then a slot (see CampaignSlots).
          const free = await this.slots.acquire(election, until, signal);
          try {
            return await this.campaigner.rounds(election, candidateId, leaseMs, sentAt, until, value, signal);
          } finally {
            free(signal?.aborted === true);
          }
        },
        signal,
      );
    } catch (err) {
      throw this.toError(err, election, 'campaign');
    }
  }

  async renew({ election, candidateId, token, leaseMs, signal }: RenewRequest): Promise<RenewResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    assertRequestToken(token, KIND, election);
    this.ensureOpen(election);
    throwIfGivenUp(signal, 'renew', KIND, election);
    const sentAt = performance.now();
    const c = this.candidacies.get(candidacyKey(election, candidateId));
    // Never creates anything: without our node in the live session there is no lease to extend.
    // The term is the node: matched by the token it was given (czxid + the offset of its term),
    // never by one recomputed from a floor that may have been raised since.
    if (!c?.node || c.node.token !== token) return { held: false, leaderId: null };
    if (!this.session.isCurrent(c.node.handle)) {
      forgetNode(c);
      return { held: false, leaderId: null };
    }
    const node = c.node;
    try {
      const until = sentAt + this.requestTimeoutMs;
      const held = await this.renewals.submit({ handle: node.handle, path: node.path, czxid: node.czxid, until });
      if (!held) {
        if (c.node === node) forgetNode(c);
        return { held: false, leaderId: await this.queue.headOfQueue(node.handle, election, until) };
      }
      return { held: true, leaseMs: this.queue.grant(node.handle, leaseMs, c.maxLeaseMs) };
    } catch (err) {
      throw this.toError(err, election, 'renew');
    }
  }

  async release({ election, candidateId, token, notAbove }: ReleaseRequest): Promise<void> {
    this.validate(election, candidateId);
    assertReleaseBounds(token, notAbove, KIND, election);
    this.ensureOpen(election);
    // Sent even when the caller has given up on it: a node that is not deleted stays, leading or
    // queued, for the whole session, whereas a late release still frees the election.
    const until = performance.now() + this.requestTimeoutMs;
    try {
      await this.turns.serialized(candidacyKey(election, candidateId), until, 'release', () =>
        this.candidacies.withdraw(election, candidateId, token, until),
      );
    } catch (err) {
      throw this.toError(err, election, 'release');
    }
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      return await this.queue.leader(election, until);
    } catch (err) {
      throw this.toError(err, election, 'getLeader');
    }
  }

  /**
   * Makes `candidateId` lead (see `ElectionAdmin.force`): only a candidate that is campaigning,
   * else `NOT_SUPPORTED`. The lease is its session's, so `leaseMs` is validated and otherwise
   * ignored.
   */
  private async forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    this.validate(election);
    assertCandidateId(candidateId, KIND, election);
    if (leaseMs !== undefined) assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      return await this.electionAdmin.force(election, candidateId, until);
    } catch (err) {
      throw this.toError(err, election, 'forceLeader');
    }
  }

  /** Raises the election's token floor (see `TokenFloor.raise`). */
  private async raiseTokenFloor(election: string, token: number): Promise<void> {
    this.validate(election);
    this.ensureOpen(election);
    assertTokenFloor(token, KIND, election);
    if (token > MAX_FLOOR) {
      // A token is czxid + offset: leave the czxids room to grow without leaving safe integers.
      throw new ConclaveError('INVALID_OPTIONS', `token floor ${token} is above ${MAX_FLOOR}, the highest ZooKeeper can keep tokens above`, {
        backend: KIND,
        election,
      });
    }
    const until = performance.now() + this.requestTimeoutMs;
    try {
      await this.floor.raise(election, token, until);
    } catch (err) {
      throw this.toError(err, election, 'raiseTokenFloor');
    }
  }

  /** Deletes the leader's node and leaves a fence (see `ElectionAdmin.clear`). */
  private async clearLeader(election: string): Promise<void> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      await this.electionAdmin.clear(election, until);
    } catch (err) {
      throw this.toError(err, election, 'clearLeader');
    }
  }

  private async listCandidates(election: string): Promise<string[]> {
    this.validate(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      const queue = await this.queue.list(this.session.current(), election, until);
      return [...new Set(queue.map((n) => candidateOf(n.candidateId)))];
    } catch (err) {
      throw this.toError(err, election, 'listCandidates');
    }
  }

  /**
   * The election node outlives its candidates, but a read creates it too (see `ElectionQueue.list`):
   * it counts once a candidate node was made under it (`cversion`) or a token floor written on it
   * (`version`).
   */
  private async electionExists(election: string): Promise<boolean> {
    this.validate(election);
    this.ensureOpen(election);
    const until = performance.now() + this.requestTimeoutMs;
    try {
      const stat = await this.queue.exists(this.session.current(), this.queue.path(election), until);
      return stat !== null && (stat.cversion > 0 || stat.version > 0);
    } catch (err) {
      throw this.toError(err, election, 'electionExists');
    }
  }

  private watch(election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    if (this.closed) return () => {};
    return this.watchers.add(candidacyKey(election, candidateId), onChange);
  }

  /**
   * Reliable: a children watch on the election node, armed again on each event and on every
   * session event (see zookeeper-leader-watch.ts). A change of the head's data (a token floor
   * raised under a head that has not confirmed yet) is not announced; its term is.
   */
  private watchLeader(election: string, onChange: () => void): () => void {
    this.validate(election);
    if (this.closed) return () => {};
    const stop = watchChildren({
      session: this.session,
      path: this.queue.path(election),
      requestTimeoutMs: this.requestTimeoutMs,
      createNode: async (handle, until) => {
        await this.queue.list(handle, election, until);
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
    this.watchers.clear();
    this.candidacies.clear();
    this.floor.clear();
    await this.session.close();
  }

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
    return new ConclaveError(conclaveCodeOf(code), `ZooKeeper error ${describeZkError(err, String(code))}`, {
      backend: KIND,
      election,
      cause: err,
    });
  }
}
