import { afterAll, expect, test } from '@jest/globals';
import { createConnection } from 'mysql2/promise';
import { MysqlBackend } from '@conclave/mysql';
import { monotonicMs } from '@conclave/test-harness';
import { BASE_URI, dropTable, sleep, uniqueElection, uniqueTable, uriFor } from './mysql-test-env';

// The server-identity fence (README, "Replicas and failover"), on the shared server: a row whose
// `written_by` names another server is what a promoted replica finds after a failover (the row
// replicated from the old primary). Here the other server is simulated by rewriting the column.

const table = uniqueTable('fence');
afterAll(() => dropTable(table));

async function sql(statement: string): Promise<Array<Record<string, unknown>>> {
  const url = new URL(BASE_URI);
  const connection = await createConnection({ host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), database: url.pathname.slice(1) });
  try {
    const [rows] = await connection.query(statement);
    return rows as Array<Record<string, unknown>>;
  } finally {
    await connection.end();
  }
}

const writtenBy = async (election: string) => (await sql(`SELECT written_by FROM \`${table}\` WHERE name = '${election}'`))[0]?.written_by;

/** Campaigns every 20 ms until `candidateId` leads; the token and when (monotonic ms). */
async function campaignUntilLeader(backend: MysqlBackend, election: string, candidateId: string, leaseMs: number, timeoutMs: number) {
  const until = monotonicMs() + timeoutMs;
  for (;;) {
    const r = await backend.campaign({ election, candidateId, leaseMs });
    if (r.role === 'leader') return { token: r.token, atMs: monotonicMs() };
    if (monotonicMs() > until) throw new Error(`${candidateId} not elected within ${timeoutMs} ms`);
    await sleep(20);
  }
}

test('a row another server wrote is fenced for the longer of the two leases from the first write here: no leader, the old term cannot renew, then a token above the old one and the µs clock', async () => {
  const election = uniqueElection('fence');
  const [a, b] = [new MysqlBackend({ uri: uriFor(table) }), new MysqlBackend({ uri: uriFor(table) })];
  try {
    // The old leader's lease (2000 ms) is longer than the new campaigns' (1000 ms): the fence
    // must outlast the longer one.
    const old = await a.campaign({ election, candidateId: 'A 1', leaseMs: 2000 });
    expect(old.role).toBe('leader');
    const oldToken = old.role === 'leader' ? old.token : -1;
    const [me] = await sql(`SELECT CONCAT(@@server_id, '/', @@hostname, ':', @@port) AS id`);
    expect(await writtenBy(election)).toBe(me!.id);
    await sql(`UPDATE \`${table}\` SET written_by = 'another/primary:3306' WHERE name = '${election}'`);
    // The old primary saw renewals this server did not: the row's end here is 500 ms too early.
    await sleep(500);

    const fencedAtMs = monotonicMs();
    const clockBeforeUs = Date.now() * 1000;
    expect(await b.campaign({ election, candidateId: 'B 1', leaseMs: 1000 })).toMatchObject({ role: 'follower', leaderId: null, token: null });
    expect(await writtenBy(election)).toBe(me!.id);
    expect(await a.renew({ election, candidateId: 'A 1', token: oldToken, leaseMs: 2000 })).toEqual({ held: false, leaderId: null });
    expect(await a.getLeader(election)).toBeNull();

    const next = await campaignUntilLeader(b, election, 'B 1', 1000, 6000);
    // The fence's end is the server's now (ms precision) + 2000 ms: at most 1 ms before the call.
    expect(next.atMs - fencedAtMs).toBeGreaterThanOrEqual(2000 - 1);
    expect(next.token).toBeGreaterThan(oldToken);
    expect(next.token).toBeGreaterThan(clockBeforeUs);
    expect(Number.isSafeInteger(next.token)).toBe(true);
    // The fence is this server's now: the terms that follow count on from its floor.
    await b.release({ election, candidateId: 'B 1' });
    expect(await a.campaign({ election, candidateId: 'A 1', leaseMs: 1000 })).toEqual({ role: 'leader', token: next.token + 1, leaseMs: 1000 });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('a row written before the column existed (written_by NULL) is not fenced: its leader renews, and the renewal records the server', async () => {
  const election = uniqueElection('legacy');
  const [a, b] = [new MysqlBackend({ uri: uriFor(table) }), new MysqlBackend({ uri: uriFor(table) })];
  try {
    const old = await a.campaign({ election, candidateId: 'A 1', leaseMs: 1500 });
    const token = old.role === 'leader' ? old.token : -1;
    await sql(`UPDATE \`${table}\` SET written_by = NULL WHERE name = '${election}'`);
    expect(await b.campaign({ election, candidateId: 'B 1', leaseMs: 1500 })).toMatchObject({ role: 'follower', leaderId: 'A 1', token });
    expect(await a.renew({ election, candidateId: 'A 1', token, leaseMs: 1500 })).toEqual({ held: true, leaseMs: 1500 });
    expect(await writtenBy(election)).not.toBeNull();
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('a released row another server wrote is fenced too, and forceLeader waits for the fence to end', async () => {
  const election = uniqueElection('force');
  const a = new MysqlBackend({ uri: uriFor(table) });
  try {
    await a.campaign({ election, candidateId: 'A 1', leaseMs: 1000 });
    await a.release({ election, candidateId: 'A 1' });
    // Released on the old primary; the old leader might have taken it again there since.
    await sql(`UPDATE \`${table}\` SET written_by = 'another/primary:3306' WHERE name = '${election}'`);
    const startedMs = monotonicMs();
    const forced = await a.admin!.forceLeader(election, 'F', 1000);
    expect(monotonicMs() - startedMs).toBeGreaterThanOrEqual(1000 - 1);
    expect(forced).toMatchObject({ candidateId: 'F' });
    expect(forced.token).toBeGreaterThan(1_000_000);
  } finally {
    await a.close();
  }
});
