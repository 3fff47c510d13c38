import { afterAll, beforeAll } from '@jest/globals';
import { describeBackendConformance } from '@conclave/test-harness';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';

// One private server for the whole file; every candidate has its own session through its own
// proxy, so that `freeze` can blackhole exactly one session until the server expires it.
let server: ZookeeperServer | undefined;
const pool = new BackendPool(() => server!.connect);

beforeAll(async () => {
  server = await startZookeeperServer();
}, 120_000);

afterAll(async () => {
  await pool.closeAll();
  await server?.close();
});

describeBackendConformance('zookeeper', {
  profile: { candidates: true, changes: 'reliable', leaseEnds: false, leaderChanges: 'reliable', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: false, leaseEndsAt: false, transitions: false } },
  create: async () => (await pool.proxied()).backend,
  freeze: (backend) => pool.proxyOf(backend).blackhole(),
});
