import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import {
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  CampaignSlots,
  throwIfGivenUp,
  whenGivenUp,
  type BackendAdmin,
  type CandidateQueue,
  type ChangeFeed,
  type LeaderFeed,
  type TokenFloor,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type LeaseEndHint,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type LeaderMetadataKept,
} from '@conclave/core/spi';
import { changedChannel, electionKeys, type ElectionKeys } from './redis-keys';
import { candidateTtlMs, quietCandidateTtlMs, type LeaseOps } from './redis-lease-ops';
import { RedisNode } from './redis-node';
import { EXISTS } from './redis-scripts';
import { resolveRedisOptions, type RedisBackendOptions, type ResolvedRedisOptions } from './redis-options';
import { QuorumLeaseOps } from './redis-quorum';
import { SingleLeaseOps } from './redis-single';

/**
 * Value, term start and last renewal live in the lease hash, the lease end is its TTL. No
 * transitions: the term counter jumps (a raised token floor, tokenClockFloor), so it does not count terms.
 */
const LEADER_METADATA: LeaderMetadataKept = Object.freeze({ value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: false });

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
  /** Which leader fields `getLeader()` reports (see `LeaderMetadataKept`). */
  readonly leaderMetadata = LEADER_METADATA;
  /** true when the backend runs Redlock over several masters. */
  readonly quorum: boolean;
  readonly admin: BackendAdmin = {
    forceLeader: (election, candidateId, leaseMs) => this.forceLeader(election, candidateId, leaseMs),
    clearLeader: (election) => this.clearLeader(election),
    electionExists: (election) => this.electionExists(election),
  };
  /**
   * Pub/sub on every release, force and clear, best-effort (a message published while the
   * subscriber is away is lost: the core's look at the lease end covers it). On one master the
   * lease key's keyspace events also push each renewal and expiry (`leaseEnds`), when the server
   * sends them; a quorum looks at each lease end.
   */
  readonly changes: ChangeFeed;
  /** The candidates, leader first. Only with `trackCandidates`. */
  readonly candidates: CandidateQueue | undefined;
  /** Hints that the leader may have changed (see `observeLeader`). Only with `publish`. */
  readonly leaderChanges: LeaderFeed | undefined;
  readonly tokenFloor: TokenFloor;

  private readonly options: ResolvedRedisOptions;
  private readonly nodes: RedisNode[];
  private readonly ops: LeaseOps;
  private closed = false;
  /**
   * Campaigns in flight, bounded (see CampaignSlots): all of a process's Electors campaign at once
   * at start, and again when many leases end together; unbounded, thousands of campaigns sit on
   * the connection ahead of the leaders' renewals, which then come back too late and end more
   * terms, whose successors campaign in turn.
   */
  private readonly slots = new CampaignSlots('redis');
  /**
   * Quiet followers (single master, keyspace events on): election → the length of the holder's
   * last take or renewal, from the latest follower answer; absent when unknown.
   */
  private readonly holderLeases = new Map<string, number>();
  /**
   * Quiet followers with `trackCandidates`: "election\ninstance" → performance.now() by which the
   * instance must campaign again to stay listed (see `quietCandidateTtlMs`).
   */
  private readonly listedUntil = new Map<string, number>();
  /** "election\ninstance" → subscribes that watch to the lease key's keyspace channel, until it has. */
  private readonly keyspaceAttach = new Map<string, () => void>();
  /**
   * Watched election → its keys and how many watches it has. The calls of an Elector, and
   * `isWatching` at each of its looks, find them here: built at each call, they are seven new
   * strings (and the channel a new one to hash) thousands of times a second in a busy process.
   */
  private readonly watched = new Map<string, { keys: ElectionKeys; watches: number }>();
  /** Watch deliveries due on the next turn (see `deliverNextTurn`). */
  private deliveries: Array<() => void> = [];

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; connects in the background. */
  constructor(options: RedisBackendOptions) {
    this.options = resolveRedisOptions(options);
    this.quorum = this.options.quorum;
    this.changes = {
      delivery: 'best-effort',
      leaseEnds: !this.quorum && this.options.keyspaceEvents !== 'off',
      watch: (election, candidateId, onChange) => this.watch(election, candidateId, onChange),
      isWatching: (election, candidateId) => this.isWatching(election, candidateId),
    };
    this.tokenFloor = { raise: (election, token) => this.raiseTokenFloor(election, token), followsClock: this.options.tokenClockFloor };
    this.nodes = this.options.sources.map(
      (source, i) => new RedisNode(source, this.options, this.options.sources.length > 1 ? `redis master ${i + 1}` : 'redis'),
    );
    this.ops = this.quorum ? new QuorumLeaseOps(this.nodes, this.options) : new SingleLeaseOps(this.nodes[0]!, this.options);
    this.candidates = this.options.trackCandidates ? { list: (election) => this.listCandidates(election) } : undefined;
    this.leaderChanges = this.options.publish ? { delivery: 'best-effort', watch: (election, onChange) => this.observeLeader(election, onChange) } : undefined;
  }

  async campaign({ election, candidateId, leaseMs, value, signal, deadlineMs }: CampaignRequest): Promise<CampaignResult> {
    const keys = this.enter(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    if (value !== undefined) assertLeaderValue(value, this.kind, election);
    throwIfGivenUp(signal, 'campaign', this.kind, election);
    // A watch whose keyspace subscription is not made yet (the server could not be asked) tries again.
    this.keyspaceAttach.get(`${election}\n${candidateId}`)?.();
    await this.subscriptionsSettled(keys, leaseMs, signal);
    throwIfGivenUp(signal, 'campaign', this.kind, election);
    // How long this campaign keeps the candidate listed: longer for a quiet follower, which
    // campaigns again only halfway through (see leaseEndOf).
    const listedFor = this.options.trackCandidates ? (this.quietOn() ? quietCandidateTtlMs(leaseMs) : candidateTtlMs(leaseMs)) : undefined;
    const until = deadlineMs ?? performance.now() + this.options.commandTimeoutMs;
    const free = await this.slots.acquire(election, until, signal);
    let answer: Awaited<ReturnType<LeaseOps['campaign']>>;
    const sentAt = performance.now();
    try {
      answer = await this.ops.campaign(keys, election, candidateId, leaseMs, value, listedFor);
    } finally {
      free(signal?.aborted === true || performance.now() > until);
    }
    const { holderLeaseMs, ...result } = answer;
    if (result.role === 'follower') {
      if (holderLeaseMs === undefined) this.holderLeases.delete(election);
      else this.holderLeases.set(election, holderLeaseMs);
    }
    // Halfway through its listing, so that a follower told of every renewal still shows.
    if (listedFor !== undefined && this.changes.leaseEnds) this.listedUntil.set(`${election}\n${candidateId}`, sentAt + listedFor / 2);
    return result;
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

  private async forceLeader(election: string, candidateId: string, leaseMs = this.options.defaultLeaseMs): Promise<LeaderInfo> {
    const keys = this.enter(election, candidateId);
    assertCandidateId(candidateId, this.kind, election);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    return this.ops.forceLeader(keys, election, candidateId, leaseMs);
  }

  private async clearLeader(election: string): Promise<void> {
    return this.ops.clearLeader(this.enter(election), election);
  }

  private async listCandidates(election: string): Promise<string[]> {
    return this.ops.listCandidates(this.enter(election), election);
  }

  /**
   * The term counter tells: set by the first term (or a raised floor), it never expires. A quorum
   * term is on a majority of the masters: one master that has it is enough; to say no, a majority
   * must answer.
   */
  private async electionExists(election: string): Promise<boolean> {
    const keys = this.enter(election);
    const replies = await Promise.allSettled(this.nodes.map((node) => node.run({ script: EXISTS, keys: [keys.term], args: [], election })));
    if (replies.some((r) => r.status === 'fulfilled' && r.value === 1)) return true;
    const failed = replies.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (this.nodes.length - failed.length < Math.floor(this.nodes.length / 2) + 1) throw failed[0]!.reason;
    return false;
  }

  /** Every term that starts after this resolves gets a token greater than `token`. */
  private async raiseTokenFloor(election: string, token: number): Promise<void> {
    const keys = this.enter(election);
    assertToken(token);
    return this.ops.raiseTokenFloor(keys, election, token);
  }

  /**
   * Subscribes to the election's channel on every master (one shared subscriber connection per
   * master, made on first use). Messages are hints: a lost one is covered by the core's poll.
   */
  private watch(election: string, candidateId: string, onChange: (hint?: LeaseEndHint) => void): () => void {
    assertElectionName(election, this.kind);
    assertInstanceId(candidateId, this.kind, election);
    // Closed: nothing to subscribe to; the Elector's next call rejects with CLOSED (throwing here
    // would escape synchronously from Elector.start()).
    if (this.closed) return () => undefined;
    const keys = this.keysOf(election);
    const { channel, lease } = keys;
    this.countWatch(election, keys, 1);
    // In quorum mode one release publishes on every master: coalesce the copies that arrive
    // together into one hint. A change outweighs a lease end in the same burst (a revocation is a
    // PEXPIRE and then a message); of several lease ends the soonest is passed on.
    let pending: 'change' | number | null = null;
    const flush = () => {
      const next = pending;
      pending = null;
      if (stopped || next === null) return;
      if (next === 'change') onChange();
      else onChange({ leaseRemainingMs: next });
    };
    const deliver = (what: 'change' | number) => {
      if (pending === null) {
        this.deliverNextTurn(flush);
        pending = what;
      } else if (pending !== 'change') {
        pending = what === 'change' ? what : Math.min(pending, what);
      }
    };
    let stopped = false;
    const unsubscribers = this.nodes.map((node) => node.watch(channel, () => deliver('change')));
    const watchKey = `${election}\n${candidateId}`;
    if (this.changes.leaseEnds) {
      // One master: the lease key's keyspace channel, once the server is known to send its events.
      // If the server could not be asked yet, each campaign of this candidate asks again.
      const node = this.nodes[0]!;
      const keyspaceChannel = this.keyspaceChannel(lease);
      let attached = false;
      let asking = false;
      const attach = () => {
        if (attached || asking || stopped || this.closed) return;
        asking = true;
        void node.keyspaceEvents(this.options.keyspaceEvents).then((on) => {
          asking = false;
          if (!on || attached || stopped || this.closed) return;
          attached = true;
          this.keyspaceAttach.delete(watchKey);
          unsubscribers.push(
            node.watch(keyspaceChannel, (event) => {
              const hint = this.leaseEndOf(event, election, watchKey);
              if (hint !== null) deliver(hint);
            }),
          );
        });
      };
      this.keyspaceAttach.set(watchKey, attach);
      attach();
    }
    return () => {
      if (stopped) return;
      stopped = true;
      this.countWatch(election, keys, -1);
      this.listedUntil.delete(watchKey);
      this.keyspaceAttach.delete(watchKey);
      for (const unsubscribe of unsubscribers) unsubscribe();
    };
  }

  private countWatch(election: string, keys: ElectionKeys, by: 1 | -1): void {
    const entry = this.watched.get(election) ?? { keys, watches: 0 };
    entry.watches += by;
    if (entry.watches > 0) this.watched.set(election, entry);
    else this.watched.delete(election);
  }

  /** The keys of `election`: those of its watches while it is watched, else made afresh. */
  private keysOf(election: string): ElectionKeys {
    return this.watched.get(election)?.keys ?? electionKeys(this.options.keyPrefix, election);
  }

  /**
   * Runs `flush` on the next turn, with every other flush asked for in this one: one immediate
   * for a burst of messages (a socket read brings hundreds at once, one per renewal of a leader
   * of thousands of elections), not one each.
   */
  private deliverNextTurn(flush: () => void): void {
    this.deliveries.push(flush);
    if (this.deliveries.length > 1) return;
    setImmediate(() => {
      const due = this.deliveries;
      this.deliveries = [];
      for (const run of due) run();
    });
  }

  /**
   * What a keyspace event on the lease key tells a follower (see the keyspace notifications of
   * https://redis.io/docs/latest/develop/use/keyspace-notifications/): `expire` (the PEXPIRE of a
   * renewal, a take, a join; also of a revocation, which publishes a change after it) → the lease
   * now ends one holder's lease from now; `expired` → it has ended (0); `del` (a release, a forced
   * install) → a change. The holder's lease length comes from the follower's last answer; unknown,
   * a renewal tells nothing. With candidates tracked, the end is brought forward to when this
   * candidate must campaign to stay listed. Anything else (`hset`, a reconnect): null. `watchKey`:
   * "election\ninstance", made once per watch (this runs for every renewal of every election).
   */
  private leaseEndOf(event: string | null, election: string, watchKey: string): 'change' | number | null {
    if (event === 'del') return 'change';
    if (event === 'expired') return 0;
    if (event !== 'expire') return null;
    const holderLease = this.holderLeases.get(election);
    if (holderLease === undefined) return null;
    const listedUntil = this.listedUntil.get(watchKey);
    return listedUntil === undefined ? holderLease : Math.max(0, Math.min(holderLease, Math.floor(listedUntil - performance.now())));
  }

  /** The lease key's keyspace channel on the one master (its database, its client's key prefix). */
  private keyspaceChannel(lease: string): string {
    const { options } = this.nodes[0]!.client;
    return `__keyspace@${options.db ?? 0}__:${options.keyPrefix ?? ''}${lease}`;
  }

  /** Whether followers are told of renewals now (single master, keyspace events on). */
  private quietOn(): boolean {
    return this.changes.leaseEnds && this.nodes[0]!.keyspaceStatus === 'on';
  }

  /**
   * For tests and diagnostics: whether the master sends the keyspace events quiet followers need
   * (`'on'`), does not (`'off'`), refused `CONFIG` (`'refused'`), or has not been asked yet
   * (`'unknown'`: no election watched yet, or the server not reached). Always `'off'` in quorum
   * mode or with `keyspaceEvents: 'off'`.
   */
  keyspaceEventsStatus(): 'on' | 'off' | 'refused' | 'unknown' {
    return this.changes.leaseEnds ? this.nodes[0]!.keyspaceStatus : 'off';
  }

  /**
   * Subscribes an observer to the election's channel (release, force, clear) and to its `elected`
   * channel (a new term), on every master; every reconnect of a subscriber connection is a hint
   * too. Best-effort: a message published while the subscriber is away is lost, and a lease that
   * merely expires (a holder gone without releasing) publishes nothing. `leaderChanges`, with `publish`.
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
  private isWatching(election: string, _candidateId: string): boolean {
    if (this.closed) return false;
    const channel = this.watched.get(election)?.keys.channel ?? changedChannel(this.options.keyPrefix, election);
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
   * when the caller gives up on the campaign (`signal`), which is then not sent. With keyspace
   * events it also waits for the check of the server's setting and the lease key's SUBSCRIBE, so
   * that the first answer already counts on them (a quiet follower's listing, its first renewal).
   */
  private async subscriptionsSettled(keys: ElectionKeys, leaseMs: number, signal: AbortSignal | undefined): Promise<void> {
    // Nothing to wait for (every campaign but the first of a watch): no timer, no listener.
    if (!this.subscriptionsPending(keys)) return;
    let timer: NodeJS.Timeout | undefined;
    const givenUp = whenGivenUp(signal);
    const node = this.nodes[0]!;
    const keyspace = this.changes.leaseEnds
      ? node.keyspaceEvents(this.options.keyspaceEvents).then((on) => (on ? node.subscribed(this.keyspaceChannel(keys.lease)) : undefined))
      : Promise.resolve();
    await Promise.race([
      Promise.all([...this.nodes.map((node) => node.subscribed(keys.channel)), keyspace]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.min(this.options.commandTimeoutMs, Math.floor(leaseMs / 4)));
      }),
      givenUp.promise,
    ]);
    clearTimeout(timer);
    givenUp.dispose();
  }

  /** Whether `subscriptionsSettled` has something to wait for. Synchronous. */
  private subscriptionsPending(keys: ElectionKeys): boolean {
    if (this.nodes.some((node) => node.subscribing(keys.channel))) return true;
    if (!this.changes.leaseEnds) return false;
    const node = this.nodes[0]!;
    const status = node.keyspaceStatus;
    return status === 'unknown' || (status === 'on' && node.subscribing(this.keyspaceChannel(keys.lease)));
  }

  /**
   * Validates before any I/O; returns the election's keys. The candidate is a rest parameter,
   * not an optional one, so that an explicit `undefined` id is refused too.
   */
  private enter(election: string, ...candidate: [candidateId?: string]): ElectionKeys {
    assertElectionName(election, this.kind);
    if (candidate.length > 0) assertInstanceId(candidate[0], this.kind, election);
    if (this.closed) throw new ConclaveError('CLOSED', 'the Redis backend is closed', { backend: this.kind, election });
    return this.keysOf(election);
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
