import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

/** The shared MariaDB of this machine; override with CONCLAVE_MYSQL_URI (no query string). */
export const BASE_URI = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';

/** A table name no other test file or run uses. */
export function uniqueTable(label: string): string {
  return `t_${label}_${randomBytes(4).toString('hex')}`;
}

/** An election name no other test or run uses. */
export function uniqueElection(label = 'e'): string {
  return `${label}-${randomBytes(5).toString('hex')}`;
}

export function uriFor(table: string): string {
  return `${BASE_URI}?table=${table}`;
}

// The shared test helpers, under the names these tests use: poll until true, and wait.
export { waitFor as eventually, delay as sleep } from '@conclave/test-harness';

/** Drops a test table (afterAll), so runs do not pile tables up in the shared database. */
export async function dropTable(table: string, uri = BASE_URI): Promise<void> {
  const url = new URL(uri);
  const connection = await createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
  });
  try {
    await connection.query(`DROP TABLE IF EXISTS \`${table}\``);
  } finally {
    await connection.end();
  }
}
