import { afterAll, expect, test } from '@jest/globals';
import { createConnection } from 'mysql2/promise';
import { MysqlBackend } from '@conclave/mysql';
import { BASE_URI, dropTable, uniqueElection, uniqueTable, uriFor } from './mysql-test-env';

// A table as the first builds created it: no term_floor, no leader metadata columns.
const table = uniqueTable('upgrade');
const OLD_DDL = `CREATE TABLE \`${table}\` (
  \`name\` VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`holder\` VARCHAR(240) CHARACTER SET ascii COLLATE ascii_bin NULL,
  \`term\` BIGINT UNSIGNED NOT NULL DEFAULT 0,
  \`expires_at\` DATETIME(3) NULL,
  PRIMARY KEY (\`name\`)
) ENGINE=InnoDB`;

async function sql(statement: string): Promise<unknown> {
  const url = new URL(BASE_URI);
  const connection = await createConnection({ host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || 'root'), database: url.pathname.slice(1) });
  try {
    const [rows] = await connection.query(statement);
    return rows;
  } finally {
    await connection.end();
  }
}

afterAll(() => dropTable(table));

test('a table created by an earlier build gets the new columns on first use; its live lease keeps its term, with unknown metadata left out', async () => {
  const election = uniqueElection('upgrade');
  await sql(OLD_DDL);
  await sql(`INSERT INTO \`${table}\` VALUES ('${election}', 'old', 5, UTC_TIMESTAMP(3) + INTERVAL 10 SECOND)`);
  // Two processes upgrade at once: both succeed.
  const [a, b] = [new MysqlBackend({ uri: uriFor(table) }), new MysqlBackend({ uri: uriFor(table) })];
  try {
    await Promise.all([a.ensureSchema(), b.ensureSchema()]);
    const before = await a.getLeader(election);
    expect(before).toMatchObject({ candidateId: 'old', token: 5 });
    expect(before).toHaveProperty('leaseEndsAt');
    for (const field of ['since', 'renewedAt', 'transitions', 'value']) expect(before).not.toHaveProperty(field);
    expect(await b.campaign({ election, candidateId: 'new', leaseMs: 1500 })).toMatchObject({ role: 'follower', leaderId: 'old', token: 5 });
    await a.release({ election, candidateId: 'old' });
    expect(await b.campaign({ election, candidateId: 'new', leaseMs: 1500, value: 'addr' })).toMatchObject({ role: 'leader', token: 6 });
    const after = await a.getLeader(election);
    expect(after).toMatchObject({ candidateId: 'new', token: 6, value: 'addr', transitions: 1 });
    expect(after!.since).toBe(after!.renewedAt);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
