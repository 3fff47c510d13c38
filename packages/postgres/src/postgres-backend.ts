import {
  ConclaveError,
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
  isTombstone,
  tombstoneGraceMs,
  tombstoneHolder,
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
import { TickBatcher, campaignOutcome, givenUpError, isLiveLease, leaderInfoFromRow, leaseRowsByName, throwIfGivenUp } from '@conclave/core/internal';
import { resolvePostgresOptions, type PostgresBackendOptions, type ResolvedPostgresOptions } from './postgres-options';
import { PostgresExecutor, closedError, isNoSuchTable, sqlState, toPostgresError } from './postgres-pool';
import {
  addWrittenBySql,
  campaignSql,
  hasWrittenBySql,
  installSql,
  leaderSql,
  qualified,
  raiseFloorSql,
  readRowSql,
  releaseSql,
  renewSql,
  revokeSql,
  schemaSql,
} from './postgres-sql';
import { PostgresWakeListener, wakeChannel } from './postgres-wake-listener';
import { integerArrayLiteral, textArrayLiteral } from './postgres-arrays';

const KIND = 'postgres';

/** What the loser of two concurrent `CREATE TABLE IF NOT EXISTS` may get (see `createTable`). */
const CREATE_RACE_STATES = new Set(['23505', '42710', '42P07']);

/** Every field is a column of the lease row. */
const LEADER_METADATA = Object.freeze({ value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true });

/**
 * No `watchLeader`: a notification is sent when a term ends (release, force, clear), not when a
 * campaign starts the next one nor when a lease merely runs out, so an observer would still have
 * to poll. Observers poll `getLeader`.
 */
const LEADER_PUSH = 'none';

/**
 * Largest batch of one turn: a process campaigns for or renews up to this many elections in one
 * statement (the values travel as arrays, one bound parameter per column).
 */
const MAX_BATCH = 10_000;

/**
 * Leader election on one PostgreSQL table, one row per election, with leases on the server's
 * clock, a fencing term, one statement per batch of attempts and of renewals, and LISTEN/NOTIFY
 * to wake followers. See the package README.
 */
export class PostgresBackend implements ElectionBackend {
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
  /** The lease table, as SQL (`"table"` or `"schema"."table"`). */
  readonly table: string;
  /** Wakes this candidate when the election's lease is released, forced or cleared. Only with `wakeUp`. */
  readonly watch: ((election: string, candidateId: string, onChange: () => void) => () => void) | undefined;
  /** True while the listening connection is up and this election is watched. Only with `wakeUp`. */
  readonly isWatching: ((election: string, candidateId: string) => boolean) | undefined;

  private readonly options: ResolvedPostgresOptions;
  private readonly executor: PostgresExecutor;
  private readonly wake: PostgresWakeListener | null;
  private readonly channel: string | null;
  private readonly campaigns: TickBatcher<CampaignRequest, CampaignResult>;
  private readonly renewals: TickBatcher<RenewRequest, RenewResult>;
  /** Resolves each release with null, or with the error of a caller that gave up before it was sent. */
  private readonly releases: TickBatcher<ReleaseRequest, ConclaveError | null>;
  private schemaReady: Promise<void> | null = null;
  /** True once `schemaReady` has resolved (or no schema is to be created), until the table is found missing. */
  private schemaKnown = false;
  private closed = false;

  /** Throws `INVALID_OPTIONS`, `INVALID_URL` or `INVALID_NAME` for bad options; does no I/O. */
  constructor(options: PostgresBackendOptions) {
    this.options = resolvePostgresOptions(options);
    this.table = qualified(this.options.table, this.options.schema);
    this.executor = new PostgresExecutor(this.options.source, this.options.queryTimeoutMs, this.options.wakeUp ? 1 : 0);
    this.channel = this.options.wakeUp ? wakeChannel(this.options.table, this.options.schema) : null;
    this.wake = this.channel === null ? null : new PostgresWakeListener(this.executor, this.channel, this.options.queryTimeoutMs);
    this.capabilities = Object.freeze({ ...PostgresBackend.capabilities, push: this.wake ? 'best-effort' : 'none' });
    const wake = this.wake;
    this.watch = wake ? (election, candidateId, onChange) => this.watchWith(wake, election, candidateId, onChange) : undefined;
    this.isWatching = wake ? (election, candidateId) => !this.closed && wake.isWatching(election, candidateId) : undefined;
    // Calls made in one event-loop turn (the core runs the Electors due in the same grid slot in
    // one turn) go to the server as one statement: see flushCampaigns / flushRenewals.
    this.campaigns = new TickBatcher((requests) => this.flushCampaigns(requests), MAX_BATCH);
    this.renewals = new TickBatcher((requests) => this.flushRenewals(requests), MAX_BATCH);
    this.releases = new TickBatcher((requests) => this.flushReleases(requests), MAX_BATCH);
  }

  /** Creates the lease table if it does not exist (the DDL of `sql/schema.sql`). Idempotent; called on first use unless `createSchema: false`. */
  async ensureSchema(): Promise<void> {
    this.assertOpen();
    await this.createTable();
    this.schemaReady ??= Promise.resolve();
    this.schemaKnown = true;
  }

  private async createTable(election?: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.executor.query(schemaSql(this.table), [], election);
        await this.addMissingColumns(election);
        return;
      } catch (err) {
        // `CREATE TABLE IF NOT EXISTS` is not safe against itself: when two sessions create the
        // table at once, the loser fails on the catalog's unique index (23505), on the table's row
        // type the other just made (42710), or on the table (42P07), once the winner has
        // committed. Run again, the statement then finds the table and does nothing; a second
        // failure is not that race (a type of that name that is no table, say).
        if (attempt > 1 || !CREATE_RACE_STATES.has(sqlState(err) ?? '')) throw toPostgresError(err, election);
      }
    }
  }

  /**
   * Upgrades a table made before `written_by` existed. Looked up first: `ALTER TABLE` takes the
   * table's strongest lock even when the column is there, and would queue behind every statement
   * running on it.
   */
  private async addMissingColumns(election?: string): Promise<void> {
    if ((await this.executor.query(hasWrittenBySql, [this.table], election)).length > 0) return;
    await this.executor.query(addWrittenBySql(this.table), [], election);
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const { election, candidateId, leaseMs, value, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    if (value !== undefined) assertLeaderValue(value, KIND, election);
    throwIfGivenUp(signal, 'campaign', KIND, election);
    // Once the schema is known to be there, a call goes straight to its batch: no extra turn.
    if (!this.schemaKnown) {
      await this.ready(election);
      // The schema may have taken a while: a caller that gave up meanwhile is not sent.
      throwIfGivenUp(signal, 'campaign', KIND, election);
    }
    return this.campaigns.submit({ election, candidateId, leaseMs, ...(value === undefined ? {} : { value }) });
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    const { election, candidateId, token, leaseMs, signal } = request;
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    assertRequestToken(token, KIND, election);
    throwIfGivenUp(signal, 'renew', KIND, election);
    // Once the schema is known to be there, a call goes straight to its batch: no extra turn.
    if (!this.schemaKnown) {
      await this.ready(election);
      throwIfGivenUp(signal, 'renew', KIND, election);
    }
    return this.renewals.submit({ election, candidateId, token, leaseMs });
  }

  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    this.validate(election, candidateId);
    assertReleaseBounds(token, notAbove, KIND, election);
    // A release its caller gave up on before it got a connection is not sent: the lease runs
    // out on the server, and a late one cannot overtake the campaign that follows it.
    throwIfGivenUp(signal, 'release', KIND, election);
    await this.ready(election);
    // The releases of one turn go out as one statement, on a connection of their own, so a
    // release that reached a stalled server may run after the campaign that followed it: without
    // a token it ends no term above `notAbove`.
    const givenUp = await this.releases.submit({ election, candidateId, token: token ?? null, ...(notAbove === undefined ? {} : { notAbove }), ...(signal ? { signal } : {}) });
    if (givenUp) throw givenUp;
  }

  async raiseTokenFloor(election: string, token: number): Promise<void> {
    this.validate(election);
    assertTokenFloor(token, KIND, election);
    await this.ready(election);
    await this.run(raiseFloorSql(this.table), [election, token], election);
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    this.validate(election);
    await this.ready(election);
    const [row] = await this.run(leaderSql(this.table), [election], election);
    return row ? leaderInfoFromRow(row) : null;
  }

  /** The election's row: written by its first campaign, force or raised floor, and never deleted. */
  async electionExists(election: string): Promise<boolean> {
    this.validate(election);
    await this.ready(election);
    return (await this.run(readRowSql(this.table), [election], election)).length > 0;
  }

  /**
   * Revokes the live lease (a tombstone, see `revokeSql`), waits until it has ended on the
   * server, then installs `candidateId` in a new term (see `forceAfterRevocation`). The tombstone
   * outlives the lease by `queryTimeoutMs`, the longest this admin's second step can take.
   */
  async forceLeader(election: string, candidateId: string, leaseMs = this.options.defaultLeaseMs): Promise<LeaderInfo> {
    this.validate(election);
    assertCandidateId(candidateId, KIND, election);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    await this.ready(election);
    return forceAfterRevocation({
      kind: KIND,
      election,
      revoke: () => this.revoke(election, this.options.queryTimeoutMs, candidateId, leaseMs),
      install: async () => {
        const [row] = await this.run(installSql(this.table), [election, candidateId, leaseMs, this.channel], election);
        return row ? { candidateId, token: Number(row.term) } : null;
      },
    });
  }

  /** Revokes the live lease: a tombstone until the lease's end, so no new term starts before it. */
  async clearLeader(election: string): Promise<void> {
    this.validate(election);
    await this.ready(election);
    await this.revoke(election, 0, null, this.options.defaultLeaseMs);
  }

  /** `leaseMs`: how long a fence lasts at least, where the row was written by another server (see `revokeSql`). */
  private async revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<Revocation> {
    await this.run(revokeSql(this.table), [election, graceMs, tombstoneHolder(graceMs), this.channel, keepFor, leaseMs], election);
    const row = leaseRowsByName(await this.run(readRowSql(this.table), [election], election)).get(election);
    if (!isLiveLease(row)) return { kind: 'free' };
    if (isTombstone(row.holder)) {
      return { kind: 'revoked', waitMs: Math.max(0, Math.ceil(row.remainingUs / 1000) - tombstoneGraceMs(row.holder)) };
    }
    if (keepFor !== null && candidateOf(row.holder) === keepFor) return { kind: 'held', leader: { candidateId: keepFor, token: row.term } };
    // Taken by a candidate between the statements (after another admin's tombstone ended): the
    // install will refuse, and the next attempt revokes it.
    return { kind: 'revoked', waitMs: 0 };
  }

  private watchWith(wake: PostgresWakeListener, election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    if (typeof onChange !== 'function') {
      throw new ConclaveError('INVALID_OPTIONS', 'watch needs a function', { backend: KIND, election });
    }
    return wake.watch(election, candidateId, onChange);
  }

  /** `await using backend = …`: closes the backend when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Ends the pool if it was created from `uri` (a pool passed in stays open) and the listening connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.close();
    await this.executor.close();
  }

  // ---- batches ------------------------------------------------------------------------------

  /**
   * One statement for every campaign of this turn (`campaignSql`), whose RETURNING tells each
   * candidate whether it holds the lease, its term, and otherwise who does and for how long on
   * the server's clock. An election asked for twice in one turn (two candidates of one process)
   * goes in a second statement, after the first.
   */
  private async flushCampaigns(requests: CampaignRequest[]): Promise<CampaignResult[]> {
    const results = new Map<CampaignRequest, CampaignResult>();
    for (const round of rounds(requests)) {
      const rows = leaseRowsByName(
        await this.run(
          campaignSql(this.table),
          [round.map((r) => r.election), round.map((r) => r.candidateId), round.map((r) => r.leaseMs), round.map((r) => r.value ?? null)],
          round[0]?.election,
        ),
      );
      for (const r of round) results.set(r, campaignOutcome(rows.get(r.election), r.candidateId, r.leaseMs));
    }
    return requests.map((r) => results.get(r)!);
  }

  /**
   * One statement for every renewal of this turn (`renewSql`): `held` means the row still named
   * this candidate and token, was live, and has been extended. The statement answers the number
   * of rows it extended and one row per request it refused; a request is reported held only when
   * those add up to the batch (a shorter answer is an error, never a renewal).
   */
  private async flushRenewals(requests: RenewRequest[]): Promise<RenewResult[]> {
    const rows = await this.run(
      renewSql(this.table),
      [
        textArrayLiteral(requests.map((r) => r.election)),
        textArrayLiteral(requests.map((r) => r.candidateId)),
        integerArrayLiteral(requests.map((r) => r.token)),
        integerArrayLiteral(requests.map((r) => r.leaseMs)),
      ],
      requests[0]?.election,
    );
    let renewed: number | null = null;
    const refused = new Map<string, Record<string, unknown>>();
    for (const row of rows) {
      if (row.name === null) renewed = Number(row.renewed);
      else refused.set(key(String(row.name), String(row.asked), Number(row.token)), row);
    }
    // Every request is either extended (counted once per row: requests that repeat one
    // election, instance and token share it) or refused.
    const accounted =
      renewed !== null &&
      (renewed + rows.length - 1 === requests.length ||
        renewed + refused.size === new Set(requests.map((r) => key(r.election, r.candidateId, r.token))).size);
    if (!accounted) {
      throw new ConclaveError('BACKEND_ERROR', `PostgreSQL renewal answered ${renewed ?? 'no'} renewed and ${refused.size} refused for ${requests.length} requests`, {
        backend: KIND,
        election: requests[0]?.election,
      });
    }
    return requests.map(({ election, candidateId, token, leaseMs }): RenewResult => {
      const row = refused.size === 0 ? undefined : refused.get(key(election, candidateId, token));
      if (row === undefined) return { held: true, leaseMs };
      const current = row.current === null || row.current === undefined ? null : String(row.current);
      return { held: false, leaderId: current === null || isTombstone(current) || current === candidateId ? null : current };
    });
  }

  /**
   * One statement for every release of this turn (`releaseSql`), built once it has a connection:
   * a release whose caller gave up before then is not sent (it is answered with the error), so
   * its lease runs out on the server instead.
   */
  private async flushReleases(requests: ReleaseRequest[]): Promise<Array<ConclaveError | null>> {
    const outcomes: Array<ConclaveError | null> = requests.map(() => null);
    const election = requests[0]?.election;
    await this.runPrepared(() => {
      const live: ReleaseRequest[] = [];
      requests.forEach((r, i) => {
        if (r.signal?.aborted) outcomes[i] = givenUpError(r.signal, 'PostgreSQL call', KIND, r.election);
        else live.push(r);
      });
      if (live.length === 0) return null;
      return {
        sql: releaseSql(this.table),
        values: [
          live.map((r) => r.election),
          live.map((r) => r.candidateId),
          live.map((r) => r.token ?? null),
          live.map((r) => (r.token == null && r.notAbove !== undefined ? r.notAbove : null)),
          this.channel,
        ],
      };
    }, election);
    return outcomes;
  }

  // ---- helpers ----------------------------------------------------------------------------

  // A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
  private validate(election: string, ...candidate: [candidateId?: string]): void {
    assertElectionName(election, KIND);
    if (candidate.length > 0) assertInstanceId(candidate[0], KIND, election);
    this.assertOpen(election);
  }

  private assertOpen(election?: string): void {
    if (this.closed) throw closedError(election);
  }

  /** Creates the schema once, on first use (option `createSchema`); a failure is retried next call. */
  private ready(election: string): Promise<void> {
    if (!this.options.createSchema) {
      this.schemaKnown = true;
      return Promise.resolve();
    }
    if (!this.schemaReady) {
      const creating: Promise<void> = this.createTable(election).then(
        () => {
          if (this.schemaReady === creating) this.schemaKnown = true;
        },
        (err: unknown) => {
          if (this.schemaReady === creating) this.schemaReady = null;
          throw err;
        },
      );
      this.schemaReady = creating;
    }
    return this.schemaReady;
  }

  private run(sql: string, values: unknown[], election?: string, signal?: AbortSignal): Promise<Array<Record<string, unknown>>> {
    return this.runPrepared(() => ({ sql, values }), election, signal);
  }

  private async runPrepared(
    prepare: () => { sql: string; values: readonly unknown[] } | null,
    election?: string,
    signal?: AbortSignal,
  ): Promise<Array<Record<string, unknown>>> {
    if (this.closed) throw closedError(election);
    try {
      return await this.executor.queryPrepared(prepare, election, signal);
    } catch (err) {
      // The table was dropped behind our back: create it again on the next call.
      if (isNoSuchTable(err)) {
        this.schemaReady = null;
        this.schemaKnown = false;
      }
      throw toPostgresError(err, election);
    }
  }
}

/** The requests split so that no statement names an election twice, in order. */
function rounds(requests: CampaignRequest[]): CampaignRequest[][] {
  const out: Array<{ seen: Set<string>; items: CampaignRequest[] }> = [];
  for (const r of requests) {
    let round = out.find((x) => !x.seen.has(r.election));
    if (!round) out.push((round = { seen: new Set(), items: [] }));
    round.seen.add(r.election);
    round.items.push(r);
  }
  return out.map((x) => x.items);
}

function key(election: string, candidateId: string, token: number): string {
  return `${election}\0${candidateId}\0${token}`;
}
