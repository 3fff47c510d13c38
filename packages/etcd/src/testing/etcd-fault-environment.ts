import { RECOVERY_SLACK_MS, durableServerEnvironment, type FaultEnvironmentCore, type FaultTopology } from '@conclave/test-harness/tools';
import { startEtcd } from './etcd-server';

/**
 * The private etcd of a fault run: `single` and `duplicate-id` on one member (its data kept across
 * a restart); `ensemble` on three members, each candidate behind its own proxy to each, and the
 * members' peer traffic through proxies that can cut one member from the others while its
 * clients still reach it (see `EtcdPeerLinks`).
 */
export async function startEtcdFaultEnvironment(leaseMs: number, topology: FaultTopology): Promise<FaultEnvironmentCore> {
  if (topology === 'ensemble') {
    const cluster = await startEtcd({ members: 3, peerLinks: true });
    return {
      servers: cluster.members.map((m) => ({
        index: m.index,
        port: m.port,
        kill: () => m.kill(),
        restart: () => m.restart(),
        pause: () => m.pause(),
        resume: () => m.resume(),
      })),
      urlFor: (ports) => `etcd://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
      restartLosesState: false,
      // A lease is whole seconds, at most the lease asked; the cluster elects a leader of its own.
      recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS + 1000,
      serverElectionMs: 1500,
      ensembleLeader: () => cluster.leaderIndex(),
      isolateServer: (i, how) => cluster.isolate(i, how),
      healServers: () => cluster.heal(),
      close: () => cluster.stop(),
    };
  }
  const cluster = await startEtcd();
  const member = cluster.members[0]!;
  return durableServerEnvironment(
    { port: member.port, kill: () => member.kill(), restart: () => member.restart(), pause: () => member.pause(), resume: () => member.resume(), stop: () => cluster.stop() },
    leaseMs,
    (port) => `etcd://127.0.0.1:${port}`,
  );
}
