import {
  ConclaveError,
  assertCandidateId,
  assertInstanceId,
  candidateOf,
  assertElectionName,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  assertTokenFloor,
  forceAfterRevocation,
  isTombstone,
  tombstoneGraceMs,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type Revocation,
} from '@conclave/core';
import { TickBatcher, campaignOutcome, heldByAnother, isLiveLease, leaderInfoFromRow, leaseRowsByName, throwIfGivenUp, type LeaseRow } from '@conclave/core/internal';
import { resolveMysqlOptions, type MysqlBackendOptions, type ResolvedMysqlOptions } from './mysql-options';
import { MysqlExecutor, isNoSuchTable, toMysqlError } from './mysql-pool';
import {
  addColumnSql,
  campaignSql,
  columnsSql,
  fenceOrCreateSql,
  fenceSql,
  METADATA_COLUMNS,
  installSql,
  leaderSql,
  readRowsSql,
  releaseSql,
  renewSql,
  revokeSql,
  schemaSql,
  raiseFloorSql,
  serverIdentitySql,
  type CampaignGroup,
} from './mysql-sql';
import { MysqlWakeChannel } from './mysql-wake';
import { MAX_BATCH, READ_FIRST_BATCH, bySize, campaignBytes, renewBytes } from './mysql-batch-size';

const KIND = 'mysql';

/** Every field is a column of the lease row (`transitions` counts from when the column was added). */
const LEADER_METADATA = Object.freeze({ value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true });

/**
 * No `watchLeader`: the named-lock wake-up tells a session that a term ended (its leader released
 * or its session died), but nothing tells it that the next term started, nor that a lease was
 * forced or cleared (the revoked leader frees its lock only at its next renewal); an observer
 * would still have to poll. So observers poll `getLeader`.
 */
const LEADER_PUSH = 'none';

/**
 * Leader election on one MySQL/MariaDB table, one row per election,
 * with server-clock leases in ms, a fencing term, one round trip per batch of attempts, batched
 * renewal and a named-lock wake-up for fast hand-over. See the package README.
 */
export class MysqlBackend implements ElectionBackend {
  /** What a backend with default options declares (`wakeUp: false` makes `push` `'none'`). */
  static readonly capabilities: BackendCapabilities = Object.freeze({
    listCandidates: false,
    electionExists: true,
    push: 'best-effort',
    leaderPush: LEADER_PUSH,
    tokenFloor: true,
    leaderMetadata: LEADER_METADATA,
  });

  readonly kind = KIND;
  readonly capabilities: BackendCapabilities;
  /** The lease table this backend uses. */
  readonly table: string;
  /**
   * Wakes this candidate when the election's lease is released or forced away (named-lock
   * wake-up). Only with `wakeUp` (otherwise undefined), as `capabilities.push` declares.
   */
  readonly watch: ((election: string, candidateId: string, onChange: () => void) => () => void) | undefined;
  /**
   * True while this candidate's wake-up waiter for `election` holds one of the
   * `maxWatchConnections` slots and waits on a lock a leader holds: the core then looks again only
   * when the lease can end. Elections beyond the slots are parked (false): the core polls them at
   * retryMs. Synchronous, no I/O. Only with `wakeUp`, beside `watch`.
   */
  readonly isWatching: ((election: string, candidateId: string) => boolean) | undefined;

  private readonly options: ResolvedMysqlOptions;
  private readonly executor: MysqlExecutor;
  private readonly wake: MysqlWakeChannel | null;
  private readonly campaigns: TickBatcher<CampaignRequest, CampaignResult>;
  private readonly renewals: TickBatcher<RenewRequest, RenewResult>;
  private schemaReady: Promise<void> | null = null;
  private closed = false;

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; does no I/O. */
  constructor(options: MysqlBackendOptions) {
    this.options = resolveMysqlOptions(options);
    this.table = this.options.table;
    this.executor = new MysqlExecutor(this.options.source, this.options.queryTimeoutMs, this.options.multipleStatements);
    this.wake = this.options.wakeUp
      ? new MysqlWakeChannel(this.executor, this.table, this.options.maxWatchConnections, this.options.queryTimeoutMs)
      : null;
    this.capabilities = { listCandidates: false, electionExists: true, push: this.wake ? 'best-effort' : 'none', leaderPush: LEADER_PUSH, tokenFloor: true, leaderMetadata: LEADER_METADATA };
    const wake = this.wake;
    this.watch = wake ? (election, candidateId, onChange) => this.watchWith(wake, election, candidateId, onChange) : undefined;
    this.isWatching = wake ? (election, candidateId) => !this.closed && wake.isWatching(election, candidateId) : undefined;
    // Calls made in one event-loop turn (the core runs the Electors due in the same grid slot in
    // one turn) go to the server as one query: see flushCampaigns / flushRenewals. A batch is cut
    // only when its SQL would pass MAX_QUERY_BYTES.
    this.campaigns = new TickBatcher((requests) => bySize(requests, campaignBytes, (c) => this.flushCampaigns(c)), MAX_BATCH);
    this.renewals = new TickBatcher((requests) => bySize(requests, renewBytes, (c) => this.flushRenewals(c)), MAX_BATCH);
  }

  /**
   * Creates the lease table if it does not exist (`CREATE TABLE IF NOT EXISTS`, the DDL of
   * `sql/schema.sql`), and adds the columns a table created by an earlier build lacks
   * (`ALTER TABLE … ADD COLUMN`, only for those missing). Idempotent. Called on first use unless
   * `createSchema: false`.
   */
  async ensureSchema(): Promise<void> {
    this.assertOpen();
    try {
      await this.createOrUpgrade();
    } catch (err) {
      throw toMysqlError(err);
    }
    this.schemaReady ??= Promise.resolve();
  }

  private async createOrUpgrade(election?: string): Promise<void> {
    const [, columns] = (await this.executor.run([schemaSql(this.table), columnsSql(this.table)], election)) as [
      unknown,
      Array<Record<string, unknown>>,
    ];
    const present = new Set(columns.map((c) => String(c.name ?? c.COLUMN_NAME).toLowerCase()));
    for (const [column] of METADATA_COLUMNS) {
      if (present.has(column)) continue;
      // Another process may add it at the same moment: "duplicate column" means it is there.
      await this.executor.run([addColumnSql(this.table, column)], election).catch((err: unknown) => {
        if (!isDuplicateColumn(err)) throw err;
      });
    }
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const { election, candidateId, leaseMs, value, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    if (value !== undefined) assertLeaderValue(value, KIND, election);
    throwIfGivenUp(signal, 'campaign', KIND, election);
    await this.ready(election);
    // The schema may have taken a while: a caller that gave up meanwhile is not sent.
    throwIfGivenUp(signal, 'campaign', KIND, election);
    return this.campaigns.submit({ election, candidateId, leaseMs, ...(value === undefined ? {} : { value }) });
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    const { election, candidateId, token, leaseMs, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    assertRequestToken(token, KIND, election);
    throwIfGivenUp(signal, 'renew', KIND, election);
    await this.ready(election);
    throwIfGivenUp(signal, 'renew', KIND, election);
    return this.renewals.submit({ election, candidateId, token, leaseMs });
  }

  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    this.validate(election, candidateId);
    assertReleaseBounds(token, notAbove, KIND, election);
    // A release its caller gave up on before it got a connection is not sent: the lease runs
    // out on the server, and a late one cannot overtake the campaign that follows it.
    throwIfGivenUp(signal, 'release', KIND, election);
    await this.ready(election);
    await this.run([releaseSql(this.table, election, candidateId, token ?? null, notAbove)], election, signal);
    // Row first, then the wake-up: followers that wake must find the lease free.
    await this.wake?.follow(election, undefined);
  }

  async raiseTokenFloor(election: string, token: number): Promise<void> {
    this.validate(election);
    assertTokenFloor(token, KIND, election);
    await this.ready(election);
    // The identity is recorded only if this creates the row; a floor grants no lease.
    await this.run([serverIdentitySql(), raiseFloorSql(this.table, election, token)], election);
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    this.validate(election);
    await this.ready(election);
    const [rows] = (await this.run([leaderSql(this.table, election)], election)) as [Array<Record<string, unknown>>];
    const row = rows[0];
    return row ? leaderInfoFromRow(row) : null;
  }

  /** The election's row: written by its first campaign, force or raised floor, and never deleted. */
  async electionExists(election: string): Promise<boolean> {
    this.validate(election);
    await this.ready(election);
    const [rows] = (await this.run([readRowsSql(this.table, [election])], election)) as [unknown[]];
    return rows.length > 0;
  }

  /**
   * Revokes the live lease (a tombstone, see `revokeSql`), waits until it has ended on the
   * server, then installs `candidateId` in a new term (see `forceAfterRevocation`). The tombstone
   * outlives the lease by `queryTimeoutMs`, the longest this admin's second step can take.
   */
  async forceLeader(election: string, candidateId: string, leaseMs = this.options.defaultLeaseMs): Promise<LeaderInfo> {
    this.validate(election, candidateId);
    assertCandidateId(candidateId, KIND, election);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    await this.ready(election);
    return forceAfterRevocation({
      kind: KIND,
      election,
      revoke: () => this.revoke(election, this.options.queryTimeoutMs, candidateId, leaseMs),
      install: async () => {
        const results = await this.run(this.fenced([election], leaseMs, [installSql(this.table, election, candidateId, leaseMs)]), election);
        const token = Number((results[results.length - 1] as { insertId?: unknown }).insertId);
        if (!Number.isSafeInteger(token) || token < 0) {
          throw new ConclaveError('BACKEND_ERROR', 'forceLeader could not read the new term', { backend: KIND, election });
        }
        return token > 0 ? { candidateId, token } : null;
      },
    });
  }

  /** Revokes the live lease: a tombstone until the lease's end, so no new term starts before it. */
  async clearLeader(election: string): Promise<void> {
    this.validate(election);
    await this.ready(election);
    await this.revoke(election, 0, null, this.options.defaultLeaseMs);
  }

  /** `leaseMs`: the shortest the fence of a row another server wrote lasts (see `fenceSql`). */
  private async revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<Revocation> {
    const statements = this.fenced([election], leaseMs, [...revokeSql(this.table, election, graceMs, keepFor), readRowsSql(this.table, [election])]);
    const results = await this.run(statements, election);
    const row = leaseRowsByName(results[results.length - 1]).get(election);
    if (!isLiveLease(row)) return { kind: 'free' };
    if (isTombstone(row.holder)) {
      return { kind: 'revoked', waitMs: Math.max(0, Math.ceil(row.remainingUs / 1000) - tombstoneGraceMs(row.holder)) };
    }
    if (keepFor !== null && candidateOf(row.holder) === keepFor) return { kind: 'held', leader: { candidateId: keepFor, token: row.term } };
    // Taken by a candidate between the statements (after another admin's tombstone ended): the
    // install will refuse, and the next attempt revokes it.
    return { kind: 'revoked', waitMs: 0 };
  }

  private watchWith(wake: MysqlWakeChannel, election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    if (typeof onChange !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', 'watch needs a function', { backend: KIND, election });
    }
    if (this.closed) return () => undefined;
    return wake.watch(election, candidateId, onChange);
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Closes the pool if it was created from `uri` (a pool passed in stays open) and the wake-up connections. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.wake?.close();
    await this.executor.close();
  }

  // ---- batches ------------------------------------------------------------------------------

  /**
   * The campaigns of this turn. A batch of READ_FIRST_BATCH or more is mostly followers looking at
   * leases that other processes hold live (a process following thousands of elections looks at
   * them together): those are answered from a plain read, which takes no row lock, and only the
   * rest are written (`writeCampaigns`). Written, such a batch would lock every row it names, and
   * the holders' renewal batches would wait behind it until their leases ran out. A smaller batch
   * goes straight to the write: one round trip, and its few row locks are held for a moment.
   */
  private async flushCampaigns(requests: CampaignRequest[]): Promise<CampaignResult[]> {
    if (requests.length < READ_FIRST_BATCH) return this.writeCampaigns(requests);
    const [read] = await this.run([readRowsSql(this.table, unique(requests.map((r) => r.election)))], requests[0]?.election);
    const seen = leaseRowsByName(read);
    const toWrite = requests.filter((r) => !heldByAnother(seen.get(r.election), r.candidateId));
    const written = new Map<CampaignRequest, CampaignResult>();
    if (toWrite.length > 0) {
      const results = await this.writeCampaigns(toWrite);
      toWrite.forEach((r, i) => written.set(r, results[i]!));
    }
    return requests.map((r) => written.get(r) ?? this.outcomeOf(r, seen.get(r.election)));
  }

  /**
   * One query for a batch of campaigns: the server's identity and the fence of rows another
   * server wrote, as an upsert that also creates missing rows (`fenceOrCreateSql`), one upsert
   * per (candidate, lease) group — usually one — then one SELECT of all the rows. The SELECT is how the outcome is read back: sent in
   * the same query (multi-statement), it runs right after the upserts on the same connection, so
   * one round trip tells each candidate whether it holds the lease, its term, and otherwise who
   * does and for how long on the server's clock. No stored procedure, no RETURNING (MariaDB only),
   * no LAST_INSERT_ID packing (it can carry a number, not the leader's id).
   *
   * The SELECT reports the state after the writes; "leader" means the row names this candidate
   * and its lease is live at that moment, which the upsert just made true or which nobody but
   * this candidate could have made true.
   */
  private async writeCampaigns(requests: CampaignRequest[]): Promise<CampaignResult[]> {
    const groups = new Map<string, CampaignGroup & { seen: Set<string> }>();
    for (const r of requests) {
      const key = `${r.leaseMs}\0${r.candidateId}\0${r.value === undefined ? '' : `=${r.value}`}`;
      let group = groups.get(key);
      if (!group) {
        group = { candidateId: r.candidateId, leaseMs: r.leaseMs, value: r.value ?? null, elections: [], seen: new Set() };
        groups.set(key, group);
      }
      if (!group.seen.has(r.election)) {
        group.seen.add(r.election);
        group.elections.push(r.election);
      }
    }
    // Rows in one order in every process: two batches locking overlapping rows in opposite
    // orders could deadlock (a deadlock would surface as BACKEND_UNAVAILABLE and be retried).
    for (const group of groups.values()) group.elections.sort();
    const elections = unique(requests.map((r) => r.election));
    const statements = [...groups.values()].map((g) => campaignSql(this.table, g));
    const leaseMs = Math.max(...requests.map((r) => r.leaseMs));
    const fence = [serverIdentitySql(), fenceOrCreateSql(this.table, elections, leaseMs)];
    const results = await this.run([...fence, ...statements, readRowsSql(this.table, elections)], requests[0]?.election);
    const rows = leaseRowsByName(results[results.length - 1]);
    return requests.map((r) => this.outcomeOf(r, rows.get(r.election)));
  }

  /** A campaign's answer from its election's row, read after the write or instead of it; the wake channel follows it. */
  private outcomeOf({ election, candidateId, leaseMs }: CampaignRequest, row: LeaseRow | undefined): CampaignResult {
    const outcome = campaignOutcome(row, candidateId, leaseMs);
    if (outcome.role === 'leader') this.wake?.lead(election, outcome.token);
    else void this.wake?.follow(election, isLiveLease(row) ? row.term : null);
    return outcome;
  }

  /**
   * One query for every renewal of this turn: the fence (`fenced`), one UPDATE per distinct
   * lease length (usually one statement for all the elections a process leads), then the same
   * read-back SELECT as campaigns. A fenced row fails its renewal: its leader steps down. `held` means the row still names this candidate and token and is live.
   */
  private async flushRenewals(requests: RenewRequest[]): Promise<RenewResult[]> {
    const byLease = new Map<number, RenewRequest[]>();
    for (const r of requests) {
      const items = byLease.get(r.leaseMs);
      if (items) items.push(r);
      else byLease.set(r.leaseMs, [r]);
    }
    const statements = [...byLease.entries()].map(([leaseMs, items]) => renewSql(this.table, leaseMs, items));
    const elections = unique(requests.map((r) => r.election));
    const leaseMs = Math.max(...requests.map((r) => r.leaseMs));
    const results = await this.run(this.fenced(elections, leaseMs, [...statements, readRowsSql(this.table, elections)]), requests[0]?.election);
    const rows = leaseRowsByName(results[results.length - 1]);
    return requests.map(({ election, candidateId, token, leaseMs }) => {
      const row = rows.get(election);
      const live = isLiveLease(row);
      if (live && row.holder === candidateId && row.term === token) {
        this.wake?.lead(election, row.term);
        return { held: true, leaseMs };
      }
      void this.wake?.follow(election, live ? row.term : null);
      return { held: false, leaderId: live && !isTombstone(row.holder) ? row.holder : null };
    });
  }

  // ---- helpers ----------------------------------------------------------------------------

  /**
   * A batch that can grant, extend or revoke `elections`' leases: this server's identity first,
   * then the fence of rows another server wrote (a replica promoted since: see `fenceSql`), then
   * `writes`, which record this server in `written_by`. On one connection, in this order.
   */
  private fenced(elections: readonly string[], leaseMs: number, writes: string[]): string[] {
    return [serverIdentitySql(), fenceSql(this.table, elections, leaseMs), ...writes];
  }

  // A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
  private validate(election: string, ...candidate: [candidateId?: string]): void {
    assertElectionName(election, KIND);
    if (candidate.length > 0) assertInstanceId(candidate[0], KIND, election);
    this.assertOpen(election);
  }

  private assertOpen(election?: string): void {
    if (this.closed) throw new ConclaveError('CLOSED', 'the MySQL backend is closed', { backend: KIND, election });
  }

  /** Creates the schema once, on first use (option `createSchema`); a failure is retried next call. */
  private ready(election: string): Promise<void> {
    if (!this.options.createSchema) return Promise.resolve();
    if (!this.schemaReady) {
      this.schemaReady = this.createOrUpgrade(election).then(
        () => undefined,
        (err: unknown) => {
          this.schemaReady = null;
          throw toMysqlError(err, election);
        },
      );
    }
    return this.schemaReady;
  }

  private async run(statements: string[], election?: string, signal?: AbortSignal): Promise<unknown[]> {
    if (this.closed) throw new ConclaveError('CLOSED', 'the MySQL backend is closed', { backend: KIND, election });
    try {
      return await this.executor.run(statements, election, signal);
    } catch (err) {
      // The table was dropped behind our back: create it again on the next call.
      if (isNoSuchTable(err)) this.schemaReady = null;
      throw toMysqlError(err, election);
    }
  }
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** ER_DUP_FIELDNAME: the column is already there. */
function isDuplicateColumn(err: unknown): boolean {
  const cause = err instanceof ConclaveError ? (err.cause as { errno?: unknown } | undefined) : (err as { errno?: unknown });
  return cause?.errno === 1060;
}
