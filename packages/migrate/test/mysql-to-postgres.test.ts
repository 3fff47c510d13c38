import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { MysqlBackend } from '@conclave/mysql';
import { PostgresBackend } from '@conclave/postgres';
import { MYSQL_URI, type MigrationPair } from './migration-fixtures';
import { migrateForwardAndBack } from './forward-and-back';

// The same rolling migration as ZooKeeper → MySQL, between two lease-row stores: the machine's
// MariaDB to its PostgreSQL, forward and back (see forward-and-back.ts).
const POSTGRES_URI = process.env.CONCLAVE_POSTGRES_URI ?? 'postgres://root@127.0.0.1:5432/test';
const table = `t_migrate_${randomBytes(4).toString('hex')}`;
const pair: MigrationPair = {
  oldKind: 'mysql',
  from: () => new MysqlBackend({ uri: MYSQL_URI }),
  to: () => new PostgresBackend({ uri: `${POSTGRES_URI}?table=${table}` }),
};
const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);

afterAll(async () => {
  const client = new Client({ connectionString: POSTGRES_URI });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await client.end();
  }
});

test(`MySQL → PostgreSQL, forward and back, never has two leaders and tokens only go up (seed ${seed})`, async () => {
  await migrateForwardAndBack(pair, seed);
});
