import {
  ConclaveError,
  assertCandidateId,
  assertInstanceId,
  assertElectionName,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';
import { throwIfGivenUp, whenGivenUp } from '@conclave/core/internal';
import { electionKeys, type ElectionKeys } from './redis-keys';
import type { LeaseOps } from './redis-lease-ops';
import { RedisNode } from './redis-node';
import { resolveRedisOptions, type RedisBackendOptions, type ResolvedRedisOptions } from './redis-options';
import { QuorumLeaseOps } from './redis-quorum';
import { SingleLeaseOps } from './redis-single';

/**
 * Value, term start and last renewal live in the lease hash, the lease end is its TTL. No
 * transitions: the term counter jumps (raiseTokenFloor, tokenClockFloor), so it does not count terms.
 */
const LEADER_METADATA = Object.freeze({ value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: false });

/**
 * Leader election on Redis: a lease key taken with one Lua script (SET-NX-PX semantics plus a
 * term counter for the fencing token), renewed by compare-and-PEXPIRE (the "watchdog" of
 * Redisson is the Elector's renew loop), released by compare-and-delete, with a pub/sub message
 * on every release/force/clear that wakes followers at once. One master, or a Redlock quorum
 * over N masters (see `RedisBackendOptions`).
 */
export class RedisBackend implements ElectionBackend {
  readonly kind = 'redis';
  /** The leader metadata every Redis backend keeps, single master or quorum. */
  static readonly leaderMetadata = LEADER_METADATA;
  readonly capabilities: BackendCapabilities;
  /** true when the backend runs Redlock over several masters. */
  readonly quorum: boolean;
  /**
   * The candidates, leader first. Only with `trackCandidates` (otherwise undefined): a method is
   * there exactly when `capabilities` declares it.
   */
  readonly listCandidates: ((election: string) => Promise<string[]>) | undefined;
  /**
   * Subscribes an observer to hints that the leader may have changed (see `observeLeader`). Only
   * with `publish` (otherwise undefined), as `capabilities.leaderPush` declares.
   */
  readonly watchLeader: ((election: string, onChange: () => void) => () => void) | undefined;

  private readonly options: ResolvedRedisOptions;
  private readonly nodes: RedisNode[];
  private readonly ops: LeaseOps;
  private closed = false;

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; connects in the background. */
  constructor(options: RedisBackendOptions) {
    this.options = resolveRedisOptions(options);
    this.quorum = this.options.quorum;
    this.capabilities = {
      listCandidates: this.options.trackCandidates,
      push: 'best-effort',
      leaderPush: this.options.publish ? 'best-effort' : 'none',
      tokenFloor: true,
      tokenClock: this.options.tokenClockFloor,
      leaderMetadata: LEADER_METADATA,
    };
    this.nodes = this.options.sources.map(
      (source, i) => new RedisNode(source, this.options, this.options.sources.length > 1 ? `redis master ${i + 1}` : 'redis'),
    );
    this.ops = this.quorum ? new QuorumLeaseOps(this.nodes, this.options) : new SingleLeaseOps(this.nodes[0]!, this.options);
    this.listCandidates = this.options.trackCandidates ? (election) => this.candidates(election) : undefined;
    this.watchLeader = this.options.publish ? (election, onChange) => this.observeLeader(election, onChange) : undefined;
  }

  async campaign({ election, candidateId, leaseMs, value, signal }: CampaignRequest): Promise<CampaignResult> {
    const keys = this.enter(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    if (value !== undefined) assertLeaderValue(value, this.kind, election);
    throwIfGivenUp(signal, 'campaign', this.kind, election);
    await this.subscriptionsSettled(keys.channel, leaseMs, signal);
    throwIfGivenUp(signal, 'campaign', this.kind, election);
    return this.ops.campaign(keys, election, candidateId, leaseMs, value);
  }

  async renew({ election, candidateId, token, leaseMs, signal }: RenewRequest): Promise<RenewResult> {
    const keys = this.enter(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    assertToken(token);
    throwIfGivenUp(signal, 'renew', this.kind, election);
    return this.ops.renew(keys, election, candidateId, token, leaseMs);
  }

  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    const keys = this.enter(election, candidateId);
    assertReleaseBounds(token, notAbove, this.kind, election);
    if (token != null) assertToken(token);
    // Unsent, the lease just runs out on the server.
    throwIfGivenUp(signal, 'release', this.kind, election);
    return this.ops.release(keys, election, candidateId, token ?? null);
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    return this.ops.getLeader(this.enter(election), election);
  }

  async forceLeader(election: string, candidateId: string, leaseMs = this.options.defaultLeaseMs): Promise<LeaderInfo> {
    const keys = this.enter(election, candidateId);
    assertCandidateId(candidateId, this.kind, election);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    return this.ops.forceLeader(keys, election, candidateId, leaseMs);
  }

  async clearLeader(election: string): Promise<void> {
    return this.ops.clearLeader(this.enter(election), election);
  }

  private async candidates(election: string): Promise<string[]> {
    return this.ops.listCandidates(this.enter(election), election);
  }

  /** Every term that starts after this resolves gets a token greater than `token`. */
  async raiseTokenFloor(election: string, token: number): Promise<void> {
    const keys = this.enter(election);
    assertToken(token);
    return this.ops.raiseTokenFloor(keys, election, token);
  }

  /**
   * Subscribes to the election's channel on every master (one shared subscriber connection per
   * master, made on first use). Messages are hints: a lost one is covered by the core's poll.
   */
  watch(election: string, candidateId: string, onChange: () => void): () => void {
    assertElectionName(election, this.kind);
    assertInstanceId(candidateId, this.kind, election);
    // Closed: nothing to subscribe to; the Elector's next call rejects with CLOSED (throwing here
    // would escape synchronously from Elector.start()).
    if (this.closed) return () => undefined;
    const { channel } = electionKeys(this.options.keyPrefix, election);
    // In quorum mode one release publishes on every master: coalesce the copies that arrive
    // together into one hint.
    let pending = false;
    const listener = () => {
      if (pending) return;
      pending = true;
      setImmediate(() => {
        pending = false;
        if (!stopped) onChange();
      });
    };
    let stopped = false;
    const unsubscribers = this.nodes.map((node) => node.watch(channel, listener));
    return () => {
      if (stopped) return;
      stopped = true;
      for (const unsubscribe of unsubscribers) unsubscribe();
    };
  }

  /**
   * Subscribes an observer to the election's channel (release, force, clear) and to its `elected`
   * channel (a new term), on every master; every reconnect of a subscriber connection is a hint
   * too. Best-effort: a message published while the subscriber is away is lost, and a lease that
   * merely expires (a holder gone without releasing) publishes nothing. `watchLeader`, with `publish`.
   */
  private observeLeader(election: string, onChange: () => void): () => void {
    assertElectionName(election, this.kind);
    if (this.closed) return () => undefined;
    const { channel, elected } = electionKeys(this.options.keyPrefix, election);
    const listener = coalesced(onChange);
    const unsubscribers = this.nodes.flatMap((node) => [node.watch(channel, listener), node.watch(elected, listener)]);
    // Once the SUBSCRIBEs are confirmed (or failed), a read misses nothing published after it.
    void Promise.all(this.nodes.flatMap((node) => [node.subscribed(channel), node.subscribed(elected)])).then(listener);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      listener.cancel();
      for (const unsubscribe of unsubscribers) unsubscribe();
    };
  }

  /**
   * Whether a change of `election` reaches this backend's watchers now: the subscriber connection
   * is ready and the election's SUBSCRIBE is confirmed — on the master (single mode), or on a
   * majority of the masters (quorum: a release or a new term is written, and published, on at
   * least a majority). The core then looks again only when the lease can end instead of polling
   * at retryMs. Synchronous, no I/O. (`candidateId` does not matter: one subscription per
   * election serves every candidate of this backend.)
   */
  isWatching(election: string, _candidateId: string): boolean {
    if (this.closed) return false;
    const { channel } = electionKeys(this.options.keyPrefix, election);
    let confirmed = 0;
    for (const node of this.nodes) if (node.isSubscribed(channel)) confirmed++;
    return confirmed >= Math.floor(this.nodes.length / 2) + 1;
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes the clients conclave created and every subscriber connection; never a client you passed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  /** For tests and diagnostics: the subscriber connections made so far (one per master). */
  subscriberClients(): unknown[] {
    return this.nodes.map((n) => n.subscriberClient).filter((c) => c !== null);
  }

  /**
   * A follower's answer must not be older than its subscription: if the leader released between
   * our read and our SUBSCRIBE, the message would be lost and the follower would wait for its
   * poll while the old leader, back from its step-down hold-off, takes the lease again. So a
   * campaign first waits for the election's SUBSCRIBE to be confirmed on every master that is
   * connected or connecting — at most a quarter of the lease (or commandTimeoutMs), so the wait
   * never eats the lease. This costs one wait, on the first campaign after `watch`. It ends early
   * when the caller gives up on the campaign (`signal`), which is then not sent.
   */
  private async subscriptionsSettled(channel: string, leaseMs: number, signal: AbortSignal | undefined): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const givenUp = whenGivenUp(signal);
    await Promise.race([
      Promise.all(this.nodes.map((node) => node.subscribed(channel))),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.min(this.options.commandTimeoutMs, Math.floor(leaseMs / 4)));
      }),
      givenUp.promise,
    ]);
    clearTimeout(timer);
    givenUp.dispose();
  }

  /**
   * Validates before any I/O; returns the election's keys. The candidate is a rest parameter,
   * not an optional one, so that an explicit `undefined` id is refused too.
   */
  private enter(election: string, ...candidate: [candidateId?: string]): ElectionKeys {
    assertElectionName(election, this.kind);
    if (candidate.length > 0) assertInstanceId(candidate[0], this.kind, election);
    if (this.closed) throw new ConclaveError('CLOSED', 'the Redis backend is closed', { backend: this.kind, election });
    return electionKeys(this.options.keyPrefix, election);
  }
}

/**
 * One call of `fn` on the next turn for every burst of calls made in the same turn: in quorum mode
 * one change is published on every master, and a new term after a release is two messages.
 */
function coalesced(fn: () => void): (() => void) & { cancel(): void } {
  let pending = false;
  let cancelled = false;
  const call = () => {
    if (pending || cancelled) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      if (!cancelled) fn();
    });
  };
  return Object.assign(call, {
    cancel: () => {
      cancelled = true;
    },
  });
}

function assertToken(token: unknown): asserts token is number {
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token <= 0) {
    throw new ConclaveError('INVALID_OPTIONS', `token must be a positive integer, got ${String(token)}`, { backend: 'redis' });
  }
}
