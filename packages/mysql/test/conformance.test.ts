import { afterAll } from '@jest/globals';
import { describeBackendConformance } from '@conclave/test-harness';
import { MysqlBackend } from '@conclave/mysql';
import { dropTable, uniqueTable, uriFor } from './mysql-test-env';

// The shared MariaDB (127.0.0.1:3306, root, database `test`), in a table of this run's own.
const table = uniqueTable('conf');
const uri = uriFor(table);

describeBackendConformance('mysql', {
  profile: { candidates: false, changes: 'best-effort', leaseEnds: false, leaderChanges: 'none', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: true, leaseEndsAt: true, transitions: true } },
  create: () => new MysqlBackend({ uri }),
});

afterAll(() => dropTable(table));
