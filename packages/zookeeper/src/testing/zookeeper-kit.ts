import type { BackendKit } from '@conclave/test-harness/tools';
import { startZookeeperBenchServer } from './zookeeper-bench-server';
import { startZookeeperFaultEnvironment } from './zookeeper-fault-environment';

/** How the harness and the bench start private ZooKeeper servers (see `BackendKit`). */
export const zookeeperKit: BackendKit = {
  kind: 'zookeeper',
  providerModules: ['@conclave/zookeeper'],
  topologies: ['single', 'ensemble', 'duplicate-id'],
  startFaultEnvironment: startZookeeperFaultEnvironment,
  startBenchServer: startZookeeperBenchServer,
  // The server's lease is the session (as long as the lease by default, ended that long after
  // the last contact), while the backend grants the Elector 2/3 of it (see the package README).
  grantedLeaseMs: (leaseMs) => Math.floor((leaseMs * 2) / 3),
  followerAllowance: (leaseMs) => {
    // A ZooKeeper client pings when its connection is idle (node-zookeeper-client: a third of the
    // session timeout; the backend raises it to 45 %, see zookeeper-session.ts): keep-alive, not polling.
    const pings = 3000 / leaseMs;
    return { maxPerSec: pings * 1.15, target: `no polling (session keep-alive pings ≈ ${pings}/s allowed)` };
  },
};
