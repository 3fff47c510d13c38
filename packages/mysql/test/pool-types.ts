// Compiled by the type check of the tests, never run: mysql2's pools fit the options.
import { createPool } from 'mysql2';
import { createPool as createPromisePool } from 'mysql2/promise';
import { MysqlBackend } from '@conclave/mysql';

export function poolTypes(): void {
  new MysqlBackend({ pool: createPool({}) });
  new MysqlBackend({ pool: createPromisePool({}) });
  new MysqlBackend({ pool: async () => createPromisePool({}) });
  // @ts-expect-error not a pool
  new MysqlBackend({ pool: { not: 'a pool' } });
}
