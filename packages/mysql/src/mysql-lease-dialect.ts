import { ConclaveError } from '@conclave/core';
import {
  campaignOutcome,
  heldByAnother,
  isLiveLease,
  isTombstone,
  leaseRowsByName,
  type CampaignRequest,
  type CampaignResult,
  type LeaseRow,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core/spi';
import type { GuardedCalls, LeaseRowDialect } from '@conclave/sql-lease';
import type { ResolvedMysqlOptions } from './mysql-options';
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

/**
 * The lease row in MySQL/MariaDB: every batch is one multi-statement query (server identity,
 * fence, writes, then a read-back SELECT), values bound by `mysql-sql.ts`'s hex-literal binder,
 * and a named-lock wake-up fed by what each batch shows about who leads.
 */
export class MysqlLeaseDialect implements LeaseRowDialect {
  readonly kind = 'mysql';
  readonly label = 'MySQL';
  readonly maxBatch = MAX_BATCH;
  readonly wakeUp: MysqlWakeChannel | null;
  private readonly table: string;
  private readonly executor: MysqlExecutor;

  constructor(
    options: ResolvedMysqlOptions,
    private readonly calls: GuardedCalls,
  ) {
    this.table = options.table;
    this.executor = new MysqlExecutor(options.source, options.queryTimeoutMs, options.multipleStatements);
    this.wakeUp = options.wakeUp ? new MysqlWakeChannel(this.executor, this.table, options.maxWatchConnections, options.queryTimeoutMs) : null;
  }

  toError(err: unknown, election?: string): ConclaveError {
    return toMysqlError(err, election);
  }

  isNoSuchTable(err: unknown): boolean {
    return isNoSuchTable(err);
  }

  /**
   * `CREATE TABLE IF NOT EXISTS` (the DDL of `sql/schema.sql`), then `ALTER TABLE … ADD COLUMN`
   * for each column a table created by an earlier build lacks.
   */
  async createSchema(election?: string): Promise<void> {
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

  /** A batch is cut only when its SQL would pass MAX_QUERY_BYTES (see `bySize`). */
  campaign(requests: CampaignRequest[]): Promise<CampaignResult[]> {
    return bySize(requests, campaignBytes, (chunk) => this.flushCampaigns(chunk));
  }

  renew(requests: RenewRequest[]): Promise<RenewResult[]> {
    return bySize(requests, renewBytes, (chunk) => this.flushRenewals(chunk));
  }

  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    await this.run([releaseSql(this.table, election, candidateId, token ?? null, notAbove)], election, signal);
    // Row first, then the wake-up: followers that wake must find the lease free.
    await this.wakeUp?.follow(election, undefined);
  }

  async raiseFloor(election: string, floor: number): Promise<void> {
    // The identity is recorded only if this creates the row; a floor grants no lease.
    await this.run([serverIdentitySql(), raiseFloorSql(this.table, election, floor)], election);
  }

  async leaderRow(election: string): Promise<Record<string, unknown> | undefined> {
    const [rows] = (await this.run([leaderSql(this.table, election)], election)) as [Array<Record<string, unknown>>];
    return rows[0];
  }

  async hasRow(election: string): Promise<boolean> {
    const [rows] = (await this.run([readRowsSql(this.table, [election])], election)) as [unknown[]];
    return rows.length > 0;
  }

  /** The revocation (`revokeSql`), fenced, and the row read back in the same query. */
  async revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<LeaseRow | undefined> {
    const statements = this.fenced([election], leaseMs, [...revokeSql(this.table, election, graceMs, keepFor), readRowsSql(this.table, [election])]);
    const results = await this.run(statements, election);
    return leaseRowsByName(results[results.length - 1]).get(election);
  }

  /** The new term comes back in the OK packet's insert id (`LAST_INSERT_ID`, see `installSql`). */
  async install(election: string, candidateId: string, leaseMs: number): Promise<number | null> {
    const results = await this.run(this.fenced([election], leaseMs, [installSql(this.table, election, candidateId, leaseMs)]), election);
    const token = Number((results[results.length - 1] as { insertId?: unknown }).insertId);
    if (!Number.isSafeInteger(token) || token < 0) {
      throw new ConclaveError('BACKEND_ERROR', 'forceLeader could not read the new term', { backend: this.kind, election });
    }
    return token > 0 ? token : null;
  }

  async close(): Promise<void> {
    await this.wakeUp?.close();
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
    if (outcome.role === 'leader') this.wakeUp?.lead(election, outcome.token);
    else void this.wakeUp?.follow(election, isLiveLease(row) ? row.term : null);
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
        this.wakeUp?.lead(election, row.term);
        return { held: true, leaseMs };
      }
      void this.wakeUp?.follow(election, live ? row.term : null);
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

  private run(statements: string[], election?: string, signal?: AbortSignal): Promise<unknown[]> {
    return this.calls.run(election, () => this.executor.run(statements, election, signal));
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
