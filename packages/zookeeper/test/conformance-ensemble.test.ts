import { afterAll, beforeAll } from '@jest/globals';
import { describeBackendConformance } from '@conclave/test-harness';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';

// A three-server ensemble whose leader is stopped before the suite runs: the two others elect a
// new ZooKeeper leader and keep a quorum. Clients list all three servers (one refuses them).
let ensemble: ZookeeperEnsemble | undefined;
const pool = new BackendPool(() => ensemble!.connect);

beforeAll(async () => {
  ensemble = await startZookeeperEnsemble();
  let leader = ensemble.servers[0]!;
  for (const s of ensemble.servers) if ((await s.mode()) === 'leader') leader = s;
  await leader.stop();
  await Promise.all(ensemble.servers.filter((s) => s !== leader).map((s) => s.waitUntilServing()));
}, 180_000);

afterAll(async () => {
  await pool.closeAll();
  await ensemble?.close();
});

describeBackendConformance('zookeeper (3-server ensemble, one stopped)', {
  profile: { candidates: true, changes: 'reliable', leaseEnds: false, leaderChanges: 'reliable', tokenFloor: true, tokensFollowClock: false, leaderMetadata: { value: true, since: true, renewedAt: false, leaseEndsAt: false, transitions: false } },
  create: async () => (await pool.proxied()).backend,
  freeze: (backend) => pool.proxyOf(backend).blackhole(),
});
