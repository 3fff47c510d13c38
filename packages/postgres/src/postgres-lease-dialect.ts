import { ConclaveError } from '@conclave/core';
import {
  TickBatcher,
  campaignOutcome,
  givenUpError,
  isTombstone,
  leaseRowsByName,
  tombstoneHolder,
  type CampaignRequest,
  type CampaignResult,
  type LeaseRow,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core/spi';
import type { GuardedCalls, LeaseRowDialect } from '@conclave/sql-lease';
import type { ResolvedPostgresOptions } from './postgres-options';
import { PostgresExecutor, isNoSuchTable, sqlState, toPostgresError } from './postgres-pool';
import {
  addWrittenBySql,
  campaignSql,
  hasWrittenBySql,
  installSql,
  leaderSql,
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

/** What the loser of two concurrent `CREATE TABLE IF NOT EXISTS` may get (see `createSchema`). */
const CREATE_RACE_STATES = new Set(['23505', '42710', '42P07']);

/**
 * Largest batch of one turn: a process campaigns for or renews up to this many elections in one
 * statement (the values travel as arrays, one bound parameter per column).
 */
const MAX_BATCH = 10_000;

/**
 * The lease row in PostgreSQL: one statement per batch of campaigns, of renewals and of releases
 * (the values as bound arrays, `unnest`ed), answers read from RETURNING, and followers woken by
 * LISTEN/NOTIFY, the NOTIFY sent by the statement that ends a term.
 */
export class PostgresLeaseDialect implements LeaseRowDialect {
  readonly kind = KIND;
  readonly label = 'PostgreSQL';
  readonly maxBatch = MAX_BATCH;
  readonly wakeUp: PostgresWakeListener | null;
  private readonly executor: PostgresExecutor;
  /** The NOTIFY channel of the table, null without the wake-up (then statements notify nobody). */
  private readonly channel: string | null;
  /** Resolves each release with null, or with the error of a caller that gave up before it was sent. */
  private readonly releases: TickBatcher<ReleaseRequest, ConclaveError | null>;

  /** `table`: the table's name as SQL (`qualified`). */
  constructor(
    options: ResolvedPostgresOptions,
    private readonly table: string,
    private readonly calls: GuardedCalls,
  ) {
    this.executor = new PostgresExecutor(options.source, options.queryTimeoutMs, options.wakeUp ? 1 : 0);
    this.channel = options.wakeUp ? wakeChannel(options.table, options.schema) : null;
    this.wakeUp = this.channel === null ? null : new PostgresWakeListener(this.executor, this.channel, options.queryTimeoutMs);
    this.releases = new TickBatcher((requests) => this.flushReleases(requests), MAX_BATCH);
  }

  toError(err: unknown, election?: string): ConclaveError {
    return toPostgresError(err, election);
  }

  isNoSuchTable(err: unknown): boolean {
    return isNoSuchTable(err);
  }

  /** The DDL of `sql/schema.sql`, then `written_by` where a table made before it lacks it. */
  async createSchema(election?: string): Promise<void> {
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

  /**
   * One statement for every campaign of this turn (`campaignSql`), whose RETURNING tells each
   * candidate whether it holds the lease, its term, and otherwise who does and for how long on
   * the server's clock. An election asked for twice in one turn (two candidates of one process)
   * goes in a second statement, after the first.
   */
  async campaign(requests: CampaignRequest[]): Promise<CampaignResult[]> {
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
  async renew(requests: RenewRequest[]): Promise<RenewResult[]> {
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
   * The releases of one turn go out as one statement, on a connection of their own, so a
   * release that reached a stalled server may run after the campaign that followed it: without
   * a token it ends no term above `notAbove`.
   */
  async release({ election, candidateId, token, notAbove, signal }: ReleaseRequest): Promise<void> {
    const givenUp = await this.releases.submit({ election, candidateId, token: token ?? null, ...(notAbove === undefined ? {} : { notAbove }), ...(signal ? { signal } : {}) });
    if (givenUp) throw givenUp;
  }

  async raiseFloor(election: string, floor: number): Promise<void> {
    await this.run(raiseFloorSql(this.table), [election, floor], election);
  }

  async leaderRow(election: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await this.run(leaderSql(this.table), [election], election);
    return row;
  }

  async hasRow(election: string): Promise<boolean> {
    return (await this.run(readRowSql(this.table), [election], election)).length > 0;
  }

  /** The revocation (`revokeSql`, which also wakes the followers), then the row read back. */
  async revoke(election: string, graceMs: number, keepFor: string | null, leaseMs: number): Promise<LeaseRow | undefined> {
    await this.run(revokeSql(this.table), [election, graceMs, tombstoneHolder(graceMs), this.channel, keepFor, leaseMs], election);
    return leaseRowsByName(await this.run(readRowSql(this.table), [election], election)).get(election);
  }

  async install(election: string, candidateId: string, leaseMs: number): Promise<number | null> {
    const [row] = await this.run(installSql(this.table), [election, candidateId, leaseMs, this.channel], election);
    return row ? Number(row.term) : null;
  }

  async close(): Promise<void> {
    this.wakeUp?.close();
    await this.executor.close();
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

  private run(sql: string, values: unknown[], election?: string): Promise<Array<Record<string, unknown>>> {
    return this.runPrepared(() => ({ sql, values }), election);
  }

  private runPrepared(prepare: () => { sql: string; values: readonly unknown[] } | null, election?: string): Promise<Array<Record<string, unknown>>> {
    return this.calls.run(election, () => this.executor.queryPrepared(prepare, election));
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
