import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { MysqlBackend } from '@conclave/mysql';
import { startMariadb, type MariadbServer } from '@conclave/mysql/testing';
import { sqlOn, startReplicating, waitCaughtUp } from '../src/testing/mysql-replication';

// The row a replica holds must name the primary that wrote it, whatever the binary log format:
// under STATEMENT the replica re-runs the statement, and would put its own identity there if the
// statement read @@server_id itself rather than the user variable set before it.

let primary: MariadbServer | null = null;
let replica: MariadbServer | null = null;

beforeAll(async () => {
  [primary, replica] = await Promise.all([startMariadb({ replicationServerId: 1 }), startMariadb({ replicationServerId: 2, createTestDatabase: false })]);
  await startReplicating(replica.port, primary.port);
}, 120_000);

afterAll(async () => {
  await Promise.all([primary?.stop(), replica?.stop()]);
}, 60_000);

test.each(['STATEMENT', 'MIXED', 'ROW'])('binlog_format %s: the replica copy of a campaign and of a renewal names the primary in written_by', async (format) => {
  const p = primary!;
  const r = replica!;
  // New sessions of the primary log in this format (the backend's pool is created after).
  await sqlOn(p.port, `SET GLOBAL binlog_format = '${format}'`);
  const backend = new MysqlBackend({ uri: `${p.uri}?table=identity` });
  try {
    const election = `identity-${format}`;
    const won = await backend.campaign({ election, candidateId: 'A', leaseMs: 5000 });
    expect(won.role).toBe('leader');
    await waitCaughtUp(p.port, r.port, 10_000);
    const [primaryId] = await sqlOn(p.port, `SELECT CONCAT(@@server_id, '/', @@hostname, ':', @@port) AS id`);
    const written = async () => (await sqlOn(r.port, `SELECT written_by FROM test.identity WHERE name = '${election}'`))[0]?.written_by;
    expect(await written()).toBe(primaryId!.id);
    // Unknown again (on the primary, replicated): the renewal records the server once more.
    await sqlOn(p.port, `UPDATE test.identity SET written_by = NULL WHERE name = '${election}'`);
    expect(await backend.renew({ election, candidateId: 'A', token: won.role === 'leader' ? won.token : -1, leaseMs: 5000 })).toMatchObject({ held: true });
    await waitCaughtUp(p.port, r.port, 10_000);
    expect(await written()).toBe(primaryId!.id);
  } finally {
    await backend.close();
  }
}, 30_000);
