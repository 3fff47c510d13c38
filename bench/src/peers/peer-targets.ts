/**
 * The peers as bench targets: each on a private server of its own (the same launchers as
 * conclave's backends; etcd from the distribution's binary), driven through the same scenarios.
 */
import { join } from 'node:path';
import { CandidateProcess } from '@conclave/test-harness/tools';
import { benchKit, startServer, type BenchTarget } from '../servers';
import { etcdAvailable, ETCD_BINARY, startEtcd } from './etcd-server';
import { PEER_KITS, type PeerKind } from './peer-kinds';

export { PEER_KINDS, PEER_TITLES, type PeerKind } from './peer-kinds';

type PeerScript = 'mysql-row' | 'zk-recipe' | 'redlock-using' | 'etcd-election';

const SCRIPT: Record<PeerKind, PeerScript> = {
  'mysql-row': 'mysql-row',
  'zk-recipe': 'zk-recipe',
  redlock: 'redlock-using',
  etcd3: 'etcd-election',
};

/** Why a peer cannot run on this machine, or null when it can. */
export function peerUnavailable(kind: PeerKind): string | null {
  if (kind === 'etcd3' && !etcdAvailable()) return `no etcd binary at ${ETCD_BINARY} (Debian: apt-get install etcd-server); etcd3 peer skipped`;
  return null;
}

export async function startPeerTarget(kind: PeerKind, leaseMs: number): Promise<BenchTarget> {
  const script = SCRIPT[kind];
  const startCandidate: BenchTarget['startCandidate'] = (config) =>
    CandidateProcess.start(config, 30_000, {
      script: join(__dirname, `${script}.js`),
      name: `peer ${script}`,
      // A peer's lease reports say what its server holds; its isLeader() may still answer true
      // after that, and ending its terms there would hide the overlaps the bench looks for.
      leaseEndsTerms: false,
    });
  const kit = PEER_KITS[kind];
  if (kit === null) {
    // etcd3, the one peer without a conclave backend on its store.
    const etcd = await startEtcd();
    return {
      kind,
      port: etcd.port,
      url: (p = etcd.port) => `etcd://127.0.0.1:${p}`,
      counterName: 'gRPC messages received (etcd /metrics grpc_server_msg_received_total)',
      description: `private etcd (${ETCD_BINARY}) on 127.0.0.1:${etcd.port}`,
      counters: async () => ({ ops: await etcd.receivedMessages(), reads: null }),
      version: () => etcd.version(),
      close: () => etcd.close(),
      startCandidate,
      leaseMarginMs: 0,
    };
  }
  const server = await startServer(await benchKit(kit), leaseMs);
  return { ...server, kind, startCandidate, leaseMarginMs: 0 };
}
