import { afterAll, afterEach, describe, expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { tombstoneHolder, type CampaignResult } from '@conclave/core/spi';
import { PostgresBackend } from '@conclave/postgres';
import { dropTable, sleep, uniqueElection, uniqueTable, uriFor, withClient } from './postgres-test-env';

// The server-identity fence (README, "Replicas and failover"), on one server: a row "written by
// another server" is what a promoted replica holds after a failover, here made by rewriting
// written_by. The failover itself is staged in faults-replicated.test.ts.

const LEASE = 1500;
/** The old leader's lease, longer than the one the next candidates ask for: the fence must last the longer. */
const OLD_LEASE = 2500;
/** Realtime (the server's clock_timestamp) and monotonic time may drift apart by NTP slewing, at most 0.5 ms per s. */
const CLOCK_RATE_SLACK_MS = 5;
const FOREIGN = 'another-server/00000001';

const table = uniqueTable('fence');
const uri = uriFor(table);
const opened: PostgresBackend[] = [];

function backend(): PostgresBackend {
  const b = new PostgresBackend({ uri });
  opened.push(b);
  return b;
}

function tokenOf(r: CampaignResult): number {
  if (r.role !== 'leader') throw new Error(`expected leader, got ${JSON.stringify(r)}`);
  return r.token;
}

const sql = <T = Record<string, unknown>>(text: string, values: unknown[] = []) => withClient(async (c) => (await c.query(text, values)).rows as T[]);
const row = async (election: string) =>
  (await sql<{ holder: string | null; term: string; term_floor: string; written_by: string | null }>(`SELECT holder, term, term_floor, written_by FROM "${table}" WHERE name = $1`, [election]))[0]!;
/** The server's clock, µs since the Unix epoch. */
const serverMicros = async () => BigInt((await sql<{ us: string }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us`))[0]!.us);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

afterAll(async () => {
  await dropTable(table);
});

describe('a lease row another server wrote is fenced before anything is granted on it', () => {
  test('a campaign fences it: no leader until the longer of its lease and the row’s own after that write, a renewal of the old term fails, then a token above the old one and the µs clock', async () => {
    const election = uniqueElection();
    const old = backend();
    const next = backend();
    const oldToken = tokenOf(await old.campaign({ election, candidateId: 'old x', leaseMs: OLD_LEASE }));
    expect((await row(election)).written_by).toMatch(/^[0-9]+\/[0-9A-F]{8}$/);
    // The row as a promoted replica holds it: the old primary's last write.
    await sql(`UPDATE "${table}" SET written_by = $2 WHERE name = $1`, [election, FOREIGN]);

    const clockBefore = await serverMicros();
    const fencedFrom = performance.now();
    const first = await next.campaign({ election, candidateId: 'next y', leaseMs: LEASE });
    expect(first).toMatchObject({ role: 'follower', leaderId: null });
    const fenced = await row(election);
    expect(fenced.holder).toBe(tombstoneHolder(0));
    expect(fenced.written_by).not.toBe(FOREIGN);
    expect(BigInt(fenced.term_floor)).toBeGreaterThanOrEqual(clockBefore);
    expect(await old.renew({ election, candidateId: 'old x', token: oldToken, leaseMs: OLD_LEASE })).toMatchObject({ held: false });
    expect(await next.getLeader(election)).toBeNull();

    // Campaign every 50 ms: the first grant comes no earlier than the old lease after the fence.
    let granted: CampaignResult = first;
    while (granted.role !== 'leader') {
      await sleep(50);
      granted = await next.campaign({ election, candidateId: 'next y', leaseMs: LEASE });
      if (performance.now() - fencedFrom > OLD_LEASE + 5000) throw new Error('no term after the fence');
    }
    const waitedMs = performance.now() - fencedFrom;
    expect(waitedMs).toBeGreaterThanOrEqual(OLD_LEASE - CLOCK_RATE_SLACK_MS);
    const newToken = granted.token!;
    expect(newToken).toBeGreaterThan(oldToken);
    expect(BigInt(newToken)).toBeGreaterThan(clockBefore);
    expect(Number.isSafeInteger(newToken)).toBe(true);
    // The row is this server's again: the new leader renews.
    expect(await next.renew({ election, candidateId: 'next y', token: newToken, leaseMs: LEASE })).toMatchObject({ held: true });
  }, 20_000);

  test('a renewal fences it too, and the old leader steps down; a row written before the column existed (NULL) is not fenced', async () => {
    const election = uniqueElection();
    const b = backend();
    const token = tokenOf(await b.campaign({ election, candidateId: 'old x', leaseMs: LEASE }));
    await sql(`UPDATE "${table}" SET written_by = $2 WHERE name = $1`, [election, FOREIGN]);
    expect(await b.renew({ election, candidateId: 'old x', token, leaseMs: LEASE })).toMatchObject({ held: false });
    expect((await row(election)).holder).toBe(tombstoneHolder(0));

    const legacy = uniqueElection();
    const t = tokenOf(await b.campaign({ election: legacy, candidateId: 'old x', leaseMs: LEASE }));
    await sql(`UPDATE "${table}" SET written_by = NULL WHERE name = $1`, [legacy]);
    expect(await b.renew({ election: legacy, candidateId: 'old x', token: t, leaseMs: LEASE })).toMatchObject({ held: true });
    expect((await row(legacy)).written_by).not.toBeNull();
    await sql(`UPDATE "${table}" SET written_by = NULL WHERE name = $1`, [legacy]);
    expect(await b.campaign({ election: legacy, candidateId: 'other y', leaseMs: LEASE })).toMatchObject({ role: 'follower', leaderId: 'old x', token: t });
    expect(await b.getLeader(legacy)).toMatchObject({ candidateId: 'old', token: t });
  }, 20_000);

  test('forceLeader waits for the fence, then installs a term above the old one', async () => {
    const election = uniqueElection();
    const b = backend();
    const oldToken = tokenOf(await b.campaign({ election, candidateId: 'old x', leaseMs: LEASE }));
    await sql(`UPDATE "${table}" SET written_by = $2 WHERE name = $1`, [election, FOREIGN]);
    const from = performance.now();
    const forced = await b.admin!.forceLeader(election, 'admin', LEASE);
    expect(performance.now() - from).toBeGreaterThanOrEqual(LEASE - CLOCK_RATE_SLACK_MS);
    expect(forced.token).toBeGreaterThan(oldToken);
    expect(await b.getLeader(election)).toMatchObject({ candidateId: 'admin', token: forced.token });
  }, 20_000);

  test('a table made before written_by existed gets the column on first use, and its live lease is kept', async () => {
    const legacyTable = uniqueTable('fence_legacy');
    const election = uniqueElection();
    try {
      await sql(`CREATE TABLE "${legacyTable}" (name text COLLATE "C" NOT NULL PRIMARY KEY, holder text COLLATE "C" NULL,
        term bigint NOT NULL DEFAULT 0, term_floor bigint NOT NULL DEFAULT 0, expires_at timestamptz NULL, holder_value text NULL,
        term_started_at timestamptz NULL, renewed_at timestamptz NULL, transitions bigint NOT NULL DEFAULT 0)`);
      await sql(`INSERT INTO "${legacyTable}" (name, holder, term, expires_at, renewed_at) VALUES ($1, 'old x', 7, clock_timestamp() + interval '10 s', clock_timestamp())`, [election]);
      const b = new PostgresBackend({ uri: uriFor(legacyTable) });
      opened.push(b);
      expect(await b.renew({ election, candidateId: 'old x', token: 7, leaseMs: LEASE })).toMatchObject({ held: true });
      expect(await b.campaign({ election, candidateId: 'old x', leaseMs: LEASE })).toMatchObject({ role: 'leader', token: 7 });
    } finally {
      await dropTable(legacyTable);
    }
  }, 20_000);
});
