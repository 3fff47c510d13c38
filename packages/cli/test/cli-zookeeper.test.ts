import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { describeCliElection } from './cli-election-group';
import { describeCliWatchPush } from './cli-watch-group';

// One private ZooKeeper for the whole file (a JVM takes seconds to start).
let server: ZookeeperServer | undefined;

beforeAll(async () => {
  server = await startZookeeperServer();
}, 90_000);

afterAll(async () => {
  await server?.close();
});

describeCliElection('zookeeper', () => `zookeeper://${server!.connect}?root=/conclave-cli-test`, { listsCandidates: true });
describeCliWatchPush('zookeeper', () => `zookeeper://${server!.connect}?root=/conclave-cli-test`);
