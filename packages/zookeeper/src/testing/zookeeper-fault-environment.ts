import { RECOVERY_SLACK_MS, type FaultEnvironmentCore, type FaultTopology } from '@conclave/test-harness/tools';
import { ENSEMBLE_ELECTION_MS, zookeeperSessionTimeoutMs } from './zookeeper-fault-timing';
import { startZookeeperEnsemble, startZookeeperServer } from './zookeeper-server';

/**
 * The private ZooKeeper of a fault run: a standalone server (`single`, `duplicate-id`), or three
 * in one ensemble (`ensemble`), each candidate behind its own proxy to each server (the client
 * picks one and moves on when it loses it), the members' peer links behind proxies too so that
 * one can be cut from its peers while its clients still reach it.
 */
export async function startZookeeperFaultEnvironment(leaseMs: number, topology: FaultTopology): Promise<FaultEnvironmentCore> {
  const sessionTimeoutMs = zookeeperSessionTimeoutMs(leaseMs);
  const zkUrl = (ports: readonly number[]) =>
    `zookeeper://${ports.map((p) => `127.0.0.1:${p}`).join(',')}?sessionTimeoutMs=${sessionTimeoutMs}`;
  if (topology === 'ensemble') {
    const ensemble = await startZookeeperEnsemble({ peerProxies: true });
    return {
      servers: ensemble.servers.map((s, i) => ({ index: i, port: s.port, kill: () => s.kill(), restart: () => s.start() })),
      urlFor: zkUrl,
      restartLosesState: false,
      // A dead leader's node lasts its session timeout rather than its lease, and the ensemble
      // also elects its own leader.
      recoveryMarginMs: leaseMs + sessionTimeoutMs + ENSEMBLE_ELECTION_MS + RECOVERY_SLACK_MS,
      sessionTimeoutMs,
      serverElectionMs: ENSEMBLE_ELECTION_MS,
      async ensembleLeader() {
        const modes = await Promise.all(ensemble.servers.map((s) => s.mode().catch(() => null)));
        const i = modes.indexOf('leader');
        return i < 0 ? null : i;
      },
      isolateServer: (i: number, how?: 'silent' | 'cut') => ensemble.isolate(i, how),
      healServers: () => ensemble.heal(),
      close: () => ensemble.close(),
    };
  }
  const server = await startZookeeperServer();
  return {
    servers: [{ index: 0, port: server.port, kill: () => server.kill(), restart: () => server.start() }],
    urlFor: zkUrl,
    restartLosesState: false,
    recoveryMarginMs: leaseMs + sessionTimeoutMs + RECOVERY_SLACK_MS,
    sessionTimeoutMs,
    close: () => server.close(),
  };
}
