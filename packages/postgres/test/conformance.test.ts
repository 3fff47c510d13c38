import { afterAll } from '@jest/globals';
import { describeBackendConformance } from '@conclave/test-harness';
import { PostgresBackend } from '@conclave/postgres';
import { dropTable, uniqueTable, uriFor } from './postgres-test-env';

// The shared PostgreSQL (127.0.0.1:5432, root, database `test`), in a table of this run's own.
const table = uniqueTable('conf');
const uri = uriFor(table);

describeBackendConformance('postgres', {
  profile: { candidates: false, changes: 'best-effort', leaseEnds: false, leaderChanges: 'none', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true } },
  create: () => new PostgresBackend({ uri }),
});

afterAll(() => dropTable(table));
