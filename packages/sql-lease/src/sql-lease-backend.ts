import { ConclaveError } from '@conclave/core';
import {
  TickBatcher,
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  assertTokenFloor,
  candidateOf,
  forceAfterRevocation,
  isLiveLease,
  isTombstone,
  leaderInfoFromRow,
  throwIfGivenUp,
  tombstoneGraceMs,
  type BackendAdmin,
  type ChangeFeed,
  type LeaderMetadataKept,
  type TokenFloor,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type Revocation,
} from '@conclave/core/spi';
import type { GuardedCalls, LeaseRowDialect, LeaseWakeUp } from './lease-row-dialect';

/** Every field is a column of the lease row. */
export const LEASE_ROW_METADATA: LeaderMetadataKept = Object.freeze({ value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true });

/** The options `SqlLeaseBackend` itself reads, resolved (defaults filled in) by the dialect's package. */
export interface SqlLeaseSettings {
  /** Create the schema before the first statement that needs it (and again if the table is dropped). */
  createSchema: boolean;
  /** Lease of `forceLeader` when none is given, ms. */
  defaultLeaseMs: number;
  /** Longest wait for a connection plus one round trip, ms: how long a force's tombstone outlives the revoked lease. */
  queryTimeoutMs: number;
}

/**
 * Leader election on one SQL table, one row per election, with leases on the server's clock, a
 * fencing term, batched campaigns and renewals, and admin commands that never make two leaders
 * (a revoked lease becomes a tombstone until it could have ended). What the store's SQL, driver
 * and wake-up are is the dialect's (see `LeaseRowDialect`).
 */
export class SqlLeaseBackend implements ElectionBackend {
  readonly kind: string;
  readonly admin: BackendAdmin = {
    forceLeader: (election, candidateId, leaseMs) => this.forceLeader(election, candidateId, leaseMs),
    clearLeader: (election) => this.clearLeader(election),
    electionExists: (election) => this.electionExists(election),
  };
  readonly tokenFloor: TokenFloor = { raise: (election, token) => this.raiseTokenFloor(election, token), followsClock: false };
  readonly leaderMetadata = LEASE_ROW_METADATA;
  /**
   * Wakes candidates when the election's lease is released or revoked before its end: the
   * dialect's wake-up, best-effort (a hint, never a grant). Absent without one. No
   * `leaderChanges`: the wake-ups tell that a term ended, not that the next one started, so an
   * observer would still have to poll; observers poll `getLeader`.
   */
  readonly changes: ChangeFeed | undefined;

  private readonly dialect: LeaseRowDialect;
  private readonly campaigns: TickBatcher<CampaignRequest, CampaignResult>;
  private readonly renewals: TickBatcher<RenewRequest, RenewResult>;
  private schemaReady: Promise<void> | null = null;
  /** True once `schemaReady` has resolved (or no schema is to be created), until the table is found missing. */
  private schemaKnown = false;
  private closed = false;

  /** `dialect` is made with the guard every one of its calls to the server goes through. No I/O. */
  constructor(
    private readonly settings: SqlLeaseSettings,
    dialect: (calls: GuardedCalls) => LeaseRowDialect,
  ) {
    this.dialect = dialect({ run: (election, call) => this.guarded(election, call) });
    this.kind = this.dialect.kind;
    const wake = this.dialect.wakeUp;
    this.changes = wake
      ? {
          delivery: 'best-effort',
          leaseEnds: false,
          watch: (election, candidateId, onChange) => this.watchWith(wake, election, candidateId, onChange),
          isWatching: (election, candidateId) => !this.closed && wake.isWatching(election, candidateId),
        }
      : undefined;
    // Calls made in one event-loop turn (the core runs the Electors due in the same grid slot in
    // one turn) go to the server together: see the dialect's `campaign` and `renew`.
    this.campaigns = new TickBatcher((requests) => this.dialect.campaign(requests), this.dialect.maxBatch);
    this.renewals = new TickBatcher((requests) => this.dialect.renew(requests), this.dialect.maxBatch);
  }

  /**
   * Creates the lease table if it does not exist, and adds the columns a table created by an
   * earlier build lacks. Idempotent. Called on first use unless `createSchema: false`.
   */
  async ensureSchema(): Promise<void> {
    this.assertOpen();
    try {
      await this.dialect.createSchema();
    } catch (err) {
      throw this.dialect.toError(err);
    }
    this.schemaReady ??= Promise.resolve();
    this.schemaKnown = true;
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const { election, candidateId, leaseMs, value, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    if (value !== undefined) assertLeaderValue(value, this.kind, election);
    throwIfGivenUp(signal, 'campaign', this.kind, election);
    // Once the schema is known to be there, a call goes straight to its batch: no extra turn.
    if (!this.schemaKnown) {
      await this.ready(election);
      // The schema may have taken a while: a caller that gave up meanwhile is not sent.
      throwIfGivenUp(signal, 'campaign', this.kind, election);
    }
    return this.campaigns.submit({ election, candidateId, leaseMs, ...(value === undefined ? {} : { value }) });
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    const { election, candidateId, token, leaseMs, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    assertRequestToken(token, this.kind, election);
    throwIfGivenUp(signal, 'renew', this.kind, election);
    if (!this.schemaKnown) {
      await this.ready(election);
      throwIfGivenUp(signal, 'renew', this.kind, election);
    }
    return this.renewals.submit({ election, candidateId, token, leaseMs });
  }

  async release(request: ReleaseRequest): Promise<void> {
    const { election, candidateId, token, notAbove, signal } = request;
    this.validate(election, candidateId);
    assertReleaseBounds(token, notAbove, this.kind, election);
    // A release its caller gave up on before it got a connection is not sent: the lease runs
    // out on the server, and a late one cannot overtake the campaign that follows it.
    throwIfGivenUp(signal, 'release', this.kind, election);
    await this.ready(election);
    await this.dialect.release(request);
  }

  private async raiseTokenFloor(election: string, token: number): Promise<void> {
    this.validate(election);
    assertTokenFloor(token, this.kind, election);
    await this.ready(election);
    await this.dialect.raiseFloor(election, token);
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    this.validate(election);
    await this.ready(election);
    const row = await this.dialect.leaderRow(election);
    return row ? leaderInfoFromRow(row) : null;
  }

  /** The election's row: written by its first campaign, force or raised floor, and never deleted. */
  private async electionExists(election: string): Promise<boolean> {
    this.validate(election);
    await this.ready(election);
    return this.dialect.hasRow(election);
  }

  /**
   * Revokes the live lease (a tombstone), waits until it has ended on the server, then installs
   * `candidateId` in a new term (see `forceAfterRevocation`). The tombstone outlives the lease by
   * `queryTimeoutMs`, the longest this admin's second step can take.
   */
  private async forceLeader(election: string, candidateId: string, leaseMs = this.settings.defaultLeaseMs): Promise<LeaderInfo> {
    this.validate(election);
    assertCandidateId(candidateId, this.kind, election);
    assertPositiveInteger(leaseMs, 'leaseMs', this.kind);
    await this.ready(election);
    return forceAfterRevocation({
      kind: this.kind,
      election,
      revoke: () => this.revoke(election, this.settings.queryTimeoutMs, candidateId, leaseMs),
      install: async () => {
        const token = await this.dialect.install(election, candidateId, leaseMs);
        return token === null ? null : { candidateId, token };
      },
    });
  }

  /** Revokes the live lease: a tombstone until the lease's end, so no new term starts before it. */
  private async clearLeader(election: string): Promise<void> {
    this.validate(election);
    await this.ready(election);
    await this.revoke(election, 0, null, this.settings.defaultLeaseMs);
  }

  /** `leaseMs`: the shortest the fence of a row another server wrote lasts. */
  private async revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<Revocation> {
    const row = await this.dialect.revoke(election, graceMs, keepFor, leaseMs);
    if (!isLiveLease(row)) return { kind: 'free' };
    if (isTombstone(row.holder)) {
      return { kind: 'revoked', waitMs: Math.max(0, Math.ceil(row.remainingUs / 1000) - tombstoneGraceMs(row.holder)) };
    }
    if (keepFor !== null && candidateOf(row.holder) === keepFor) return { kind: 'held', leader: { candidateId: keepFor, token: row.term } };
    // Taken by a candidate between the statements (after another admin's tombstone ended): the
    // install will refuse, and the next attempt revokes it.
    return { kind: 'revoked', waitMs: 0 };
  }

  private watchWith(wake: LeaseWakeUp, election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    if (typeof onChange !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', 'watch needs a function', { backend: this.kind, election });
    }
    if (this.closed) return () => undefined;
    return wake.watch(election, candidateId, onChange);
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes the wake-up and the pool if it was created from `uri` (a pool passed in stays open). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dialect.close();
  }

  // A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
  private validate(election: string, ...candidate: [candidateId?: string]): void {
    assertElectionName(election, this.kind);
    if (candidate.length > 0) assertInstanceId(candidate[0], this.kind, election);
    this.assertOpen(election);
  }

  private assertOpen(election?: string): void {
    if (this.closed) throw this.closedError(election);
  }

  private closedError(election?: string): ConclaveError {
    return new ConclaveError('CLOSED', `the ${this.dialect.label} backend is closed`, { backend: this.kind, election });
  }

  /** Creates the schema once, on first use (option `createSchema`); a failure is retried next call. */
  private ready(election: string): Promise<void> {
    if (!this.settings.createSchema) {
      this.schemaKnown = true;
      return Promise.resolve();
    }
    if (!this.schemaReady) {
      const creating: Promise<void> = this.dialect.createSchema(election).then(
        () => {
          if (this.schemaReady === creating) this.schemaKnown = true;
        },
        (err: unknown) => {
          if (this.schemaReady === creating) this.schemaReady = null;
          throw this.dialect.toError(err, election);
        },
      );
      this.schemaReady = creating;
    }
    return this.schemaReady;
  }

  private async guarded<T>(election: string | undefined, call: () => Promise<T>): Promise<T> {
    if (this.closed) throw this.closedError(election);
    try {
      return await call();
    } catch (err) {
      // The table was dropped behind our back: create it again on the next call.
      if (this.dialect.isNoSuchTable(err)) {
        this.schemaReady = null;
        this.schemaKnown = false;
      }
      throw this.dialect.toError(err, election);
    }
  }
}
