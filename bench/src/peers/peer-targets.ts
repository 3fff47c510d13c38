/**
 * The peers as bench targets: each on a private server of its own, started by the kit of
 * conclave's backend on the same store, driven through the same scenarios.
 */
import { join } from 'node:path';
import { CandidateProcess, loadBackendKit } from '@conclave/test-harness/tools';
import { startServer, type BenchTarget } from '../servers';
import { PEER_KITS, type PeerKind } from './peer-kinds';

export { PEER_KINDS, PEER_TITLES, type PeerKind } from './peer-kinds';

type PeerScript = 'mysql-row' | 'zk-recipe' | 'redlock-using' | 'etcd-election';

const SCRIPT: Record<PeerKind, PeerScript> = {
  'mysql-row': 'mysql-row',
  'zk-recipe': 'zk-recipe',
  redlock: 'redlock-using',
  etcd3: 'etcd-election',
};

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
  const server = await startServer(await loadBackendKit(PEER_KITS[kind]), leaseMs);
  return { ...server, kind, startCandidate, leaseMarginMs: 0 };
}
