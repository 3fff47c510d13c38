import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The shared PostgreSQL of this machine; override with CONCLAVE_POSTGRES_URI (no query string). */
export const BASE_URI = process.env.CONCLAVE_POSTGRES_URI ?? 'postgres://root@127.0.0.1:5432/test';

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

export { waitFor as eventually, delay as sleep } from '@conclave/test-harness';

/** Runs `fn` on a client of its own, then ends it. */
export async function withClient<T>(fn: (client: Client) => Promise<T>, uri = BASE_URI): Promise<T> {
  const client = new Client({ connectionString: uri });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops a test table (afterAll), so runs do not pile tables up in the shared database. */
export function dropTable(table: string, uri = BASE_URI): Promise<void> {
  return withClient(async (c) => {
    await c.query(`DROP TABLE IF EXISTS "${table}"`);
  }, uri);
}
