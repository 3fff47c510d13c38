import { performance } from 'node:perf_hooks';
import type {
  BackendAdmin,
  CampaignRequest,
  CampaignResult,
  CandidateQueue,
  ChangeFeed,
  ElectionBackend,
  LeaderFeed,
  LeaderInfo,
  LeaderMetadataKept,
  ReleaseRequest,
  RenewRequest,
  RenewResult,
  TokenFloor,
} from './backend';
import { ConclaveError } from './errors';
import { throwIfGivenUp } from './given-up';
import { assertCandidateId, assertElectionName, assertLeaderValue, assertPositiveInteger, assertReleaseBounds, assertTokenFloor } from './validation';
import { assertInstanceId, candidateOf, mayJoinLease } from './instance-id';
import { DEFAULT_LEASE_MS } from './elector-options';
import { assertOptionKeys, optionKeys } from './option-keys';
import { forceAfterRevocation, isTombstone, tombstoneGraceMs, tombstoneHolder, tombstoneLookAgainMs, type Revocation } from './revocation';

/** How long a forceLeader tombstone outlives the revoked lease, ms (see revocation.ts). */
const FORCE_GRACE_MS = 1000;

/** Options of `new MemoryBackend(options)`. */
export interface MemoryBackendOptions {
  /** Lease given by `forceLeader` when none is passed, ms. Default 10 000. */
  defaultLeaseMs?: number;
  /**
   * The "server" to connect to. Backends that share a store see the same elections, like
   * processes connected to one database; closing one backend leaves the store to the others.
   * Default: a new private store.
   */
  store?: MemoryStore;
}

const MEMORY_BACKEND_OPTION_KEYS = optionKeys<MemoryBackendOptions>({ defaultLeaseMs: true, store: true });

/** The in-memory "server": elections, leases and tokens. Share it between MemoryBackends. */
export class MemoryStore {
  /** The elections, by name (for tests that look inside). */
  readonly elections = new Map<string, ElectionRecord>();
}

interface Lease {
  /** Instance or candidate id; a tombstone (revoked lease, held by nobody) starts with a space. */
  holder: string;
  token: number;
  /** performance.now() at which the lease ends: this "server's" clock. */
  expiresAt: number;
  /** performance.now() at which the term started. */
  since: number;
  /** performance.now() of the last take, join or renewal. */
  renewedAt: number;
  /** The holder's published value, if any. */
  value?: string;
}

/** One election's state in a MemoryStore. */
export interface ElectionRecord {
  lease: Lease | null;
  /** Last token handed out; never goes down, even when the lease is cleared. */
  lastToken: number;
  /** Terms started so far (unlike `lastToken`, not moved by `raiseTokenFloor`). */
  transitions: number;
  /** candidate id → performance.now() it was last seen campaigning. */
  candidates: Map<string, number>;
  watchers: Set<() => void>;
}

/**
 * The reference backend: one process, no server, real lease timing on the monotonic clock.
 * Many Electors in one process can share one instance (that is how the demo and the core tests
 * run). It behaves like a server reached with zero latency, answering asynchronously.
 */
export class MemoryBackend implements ElectionBackend {
  readonly kind = 'memory';
  readonly admin: BackendAdmin = {
    forceLeader: (election, candidateId, leaseMs) => this.forceLeader(election, candidateId, leaseMs),
    clearLeader: async (election) => void this.revoke(await this.enter(election), 0),
    // Reads leave an empty record behind: an election exists once it has handed out a token.
    electionExists: async (election) => (await this.enter(election)).lastToken > 0,
  };
  readonly candidates: CandidateQueue = { list: (election) => this.listCandidates(election) };
  readonly changes: ChangeFeed = {
    delivery: 'best-effort',
    leaseEnds: false,
    watch: (election, candidateId, onChange) => this.watch(election, candidateId, onChange),
  };
  // Best-effort only because a lease that runs out (a holder that stopped renewing) is not
  // announced: nothing happens in a store with no server at that moment.
  readonly leaderChanges: LeaderFeed = { delivery: 'best-effort', watch: (election, onChange) => this.watchLeader(election, onChange) };
  readonly tokenFloor: TokenFloor = { raise: (election, token) => this.raiseTokenFloor(election, token), followsClock: false };
  readonly leaderMetadata: LeaderMetadataKept = { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true };

  /** The store this backend is connected to: pass it to another MemoryBackend to share the elections. */
  readonly store: MemoryStore;
  private readonly defaultLeaseMs: number;
  private readonly unwatches = new Set<() => void>();
  private closed = false;

  constructor(options: MemoryBackendOptions = {}) {
    assertOptionKeys(options, MEMORY_BACKEND_OPTION_KEYS, 'MemoryBackend options', this.kind);
    this.store = options.store ?? new MemoryStore();
    this.defaultLeaseMs = options.defaultLeaseMs ?? DEFAULT_LEASE_MS;
    assertPositiveInteger(this.defaultLeaseMs, 'defaultLeaseMs', this.kind);
  }

  async campaign({ election, candidateId, leaseMs, value, signal }: CampaignRequest): Promise<CampaignResult> {
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    if (value !== undefined) assertLeaderValue(value, this.kind, election);
    const record = await this.enter(election, candidateId, signal, 'campaign');
    const now = performance.now();
    record.candidates.set(candidateId, now);
    const lease = this.liveLease(record, now);
    if (lease && isTombstone(lease.holder)) {
      // A revoked lease: nobody leads until it could have ended.
      return { role: 'follower', leaderId: null, token: null, leaseRemainingMs: tombstoneLookAgainMs(lease.holder, lease.expiresAt - now) };
    }
    if (lease && !mayJoinLease(lease.holder, candidateId)) {
      return { role: 'follower', leaderId: lease.holder, token: lease.token, leaseRemainingMs: lease.expiresAt - now };
    }
    if (lease) {
      lease.holder = candidateId;
      lease.expiresAt = now + leaseMs;
      lease.renewedAt = now;
      lease.value = value;
      return { role: 'leader', token: lease.token, leaseMs };
    }
    record.transitions++;
    record.lease = { holder: candidateId, token: ++record.lastToken, expiresAt: now + leaseMs, since: now, renewedAt: now, value };
    this.notify(record);
    return { role: 'leader', token: record.lease.token, leaseMs };
  }

  async renew({ election, candidateId, token, leaseMs, signal }: RenewRequest): Promise<RenewResult> {
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    if (!Number.isSafeInteger(token) || token < 0) {
      throw new ConclaveError('INVALID_OPTIONS', `token must be a non-negative integer, got ${String(token)}`, { backend: this.kind, election });
    }
    const record = await this.enter(election, candidateId, signal, 'renew');
    const now = performance.now();
    record.candidates.set(candidateId, now);
    const lease = this.liveLease(record, now);
    if (!lease || lease.holder !== candidateId || lease.token !== token) {
      return { held: false, leaderId: lease && !isTombstone(lease.holder) ? lease.holder : null };
    }
    lease.expiresAt = now + leaseMs;
    lease.renewedAt = now;
    return { held: true, leaseMs };
  }

  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    assertReleaseBounds(token, notAbove, this.kind, election);
    const record = await this.enter(election, candidateId, signal, 'release');
    record.candidates.delete(candidateId);
    const lease = record.lease;
    if (lease && lease.holder === candidateId && (token == null || lease.token === token)) {
      record.lease = null;
      this.notify(record);
    }
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    const record = await this.enter(election);
    const lease = this.liveLease(record, performance.now());
    return lease && !isTombstone(lease.holder) ? this.leaderInfo(record, lease) : null;
  }

  private leaderInfo(record: ElectionRecord, lease: Lease): LeaderInfo {
    // This process is the "server": its wall clock is the server time, read monotonically.
    const epoch = (t: number) => Math.round(performance.timeOrigin + t);
    return {
      candidateId: candidateOf(lease.holder),
      token: lease.token,
      ...(lease.value === undefined ? {} : { value: lease.value }),
      since: epoch(lease.since),
      renewedAt: epoch(lease.renewedAt),
      leaseEndsAt: epoch(lease.expiresAt),
      transitions: record.transitions,
    };
  }

  private async forceLeader(election: string, candidateId: string, leaseMs = this.defaultLeaseMs): Promise<LeaderInfo> {
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    assertElectionName(election, this.kind);
    assertCandidateId(candidateId, this.kind, election);
    return forceAfterRevocation({
      kind: this.kind,
      election,
      revoke: async () => this.revoke(await this.enter(election, candidateId), FORCE_GRACE_MS, candidateId),
      install: async () => {
        const record = await this.enter(election, candidateId);
        const now = performance.now();
        const lease = this.liveLease(record, now);
        // Only over a free lease or a tombstone whose revoked lease has ended.
        if (lease && !(isTombstone(lease.holder) && lease.expiresAt - tombstoneGraceMs(lease.holder) <= now)) return null;
        record.transitions++;
        record.lease = { holder: candidateId, token: ++record.lastToken, expiresAt: now + leaseMs, since: now, renewedAt: now };
        this.notify(record);
        return { candidateId, token: record.lease.token };
      },
    });
  }

  /**
   * Replaces the live lease by a tombstone that lives until the lease's end plus `graceMs`, and
   * keeps its token (see revocation.ts). A tombstone already there keeps its revoked lease's end;
   * it is only made to live longer. With `keepFor`, a lease held by that candidate is left alone.
   */
  private revoke(record: ElectionRecord, graceMs: number, keepFor?: string): Revocation {
    const now = performance.now();
    const lease = this.liveLease(record, now);
    if (!lease) return { kind: 'free' };
    if (isTombstone(lease.holder)) {
      const end = lease.expiresAt - tombstoneGraceMs(lease.holder);
      if (end + graceMs > lease.expiresAt) record.lease = { ...lease, holder: tombstoneHolder(graceMs), expiresAt: end + graceMs };
      return { kind: 'revoked', waitMs: Math.max(0, end - now) };
    }
    if (keepFor !== undefined && candidateOf(lease.holder) === keepFor) {
      return { kind: 'held', leader: { candidateId: keepFor, token: lease.token } };
    }
    record.lease = { ...lease, holder: tombstoneHolder(graceMs), expiresAt: lease.expiresAt + graceMs };
    this.notify(record);
    return { kind: 'revoked', waitMs: lease.expiresAt - now };
  }

  private async raiseTokenFloor(election: string, token: number): Promise<void> {
    assertTokenFloor(token, this.kind, election);
    const record = await this.enter(election);
    record.lastToken = Math.max(record.lastToken, token);
  }

  private async listCandidates(election: string): Promise<string[]> {
    const record = await this.enter(election);
    const now = performance.now();
    const live = this.liveLease(record, now);
    const lease = live && !isTombstone(live.holder) ? live : null;
    // A candidate that has not campaigned for a while (crashed without releasing) is forgotten.
    const staleBefore = now - 2 * this.defaultLeaseMs;
    const ids = [...record.candidates.entries()]
      .filter(([id, seen]) => seen >= staleBefore && id !== lease?.holder)
      .sort((a, b) => a[1] - b[1])
      .map(([id]) => candidateOf(id));
    return lease ? [candidateOf(lease.holder), ...ids] : ids;
  }

  private watch(election: string, candidateId: string, onChange: () => void): () => void {
    assertElectionName(election, this.kind);
    assertInstanceId(candidateId, this.kind, election);
    const record = this.record(election);
    // Each subscription gets its own function so one candidate can watch twice.
    const listener = () => onChange();
    record.watchers.add(listener);
    const unwatch = () => {
      record.watchers.delete(listener);
      this.unwatches.delete(unwatch);
    };
    this.unwatches.add(unwatch);
    return unwatch;
  }

  /** Hints on every release, new term, force and clear. */
  private watchLeader(election: string, onChange: () => void): () => void {
    assertElectionName(election, this.kind);
    if (this.closed) return () => undefined;
    const record = this.record(election);
    const listener = () => onChange();
    record.watchers.add(listener);
    // The subscription is in place at once; the first hint says so (see the SPI).
    setImmediate(() => {
      if (record.watchers.has(listener)) listener();
    });
    const unwatch = () => {
      record.watchers.delete(listener);
      this.unwatches.delete(unwatch);
    };
    this.unwatches.add(unwatch);
    return unwatch;
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const unwatch of [...this.unwatches]) unwatch();
  }

  /** Validates, then yields once so every answer is asynchronous like a real server's. */
  // A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
  private async enter(
    election: string,
    ...candidate: [candidateId?: string, signal?: AbortSignal | undefined, what?: string]
  ): Promise<ElectionRecord> {
    assertElectionName(election, this.kind);
    if (candidate.length > 0) assertInstanceId(candidate[0], this.kind, election);
    // The wait below stands for the round trip: a call its caller gave up on is not sent.
    throwIfGivenUp(candidate[1], candidate[2] ?? 'call', this.kind, election);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.closed) throw new ConclaveError('CLOSED', 'the memory backend is closed', { backend: this.kind, election });
    return this.record(election);
  }

  private record(election: string): ElectionRecord {
    let record = this.store.elections.get(election);
    if (!record) {
      record = { lease: null, lastToken: 0, transitions: 0, candidates: new Map(), watchers: new Set() };
      this.store.elections.set(election, record);
    }
    return record;
  }

  private liveLease(record: ElectionRecord, now: number): Lease | null {
    if (record.lease && record.lease.expiresAt <= now) record.lease = null;
    return record.lease;
  }

  private notify(record: ElectionRecord): void {
    // Delivered on a later turn, as a server's push would be, so no caller re-enters itself.
    for (const listener of [...record.watchers]) setImmediate(listener);
  }
}
