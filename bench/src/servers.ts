/**
 * The servers the bench runs against, each started by its backend's kit (`benchKits`), which
 * also reads its operation counters; see each kit's `startBenchServer` for what it starts and
 * counts.
 */
import {
  CandidateProcess,
  loadBackendKit,
  type BackendKit,
  type BenchServer,
  type CandidateConfig,
  type FollowerAllowance,
} from '@conclave/test-harness/tools';
import { benchKits } from './bench-kits';
import type { PeerKind } from './peers/peer-kinds';
import type { BenchCandidate } from './scenarios';
import { onCleanup } from './util';

export type { ServerCounters } from '@conclave/test-harness/tools';

/** One of conclave's backends the bench measures: its kit's kind. */
export type BackendKind = string;

/** The kinds of the bench's backends (`benchKits`), in order. */
export async function backendKinds(): Promise<BackendKind[]> {
  return (await benchKits()).map((kit) => kit.kind);
}

/** A system the bench measures: one of conclave's backends, or a peer. */
export type SystemKind = BackendKind | PeerKind;

export interface BenchTarget extends BenchServer {
  kind: SystemKind;
  /** Starts one candidate process of this system (conclave's candidate, or a peer script). */
  startCandidate(config: CandidateConfig): Promise<BenchCandidate>;
  /**
   * What a candidate's `lease` reports leave off the lease the server granted (conclave: the
   * Elector's safety margin; peers report the server's lease as is).
   */
  leaseMarginMs: number;
  /** The target for an idle follower's traffic, where its backend sets one (peers: none). */
  followerAllowance?: FollowerAllowance;
}

export type ServerTarget = Omit<BenchTarget, 'startCandidate' | 'leaseMarginMs'>;

/** The server for `kind` (a kind of `backendKinds()`, or a kit module name; see `loadBackendKit`), driven by conclave's own candidate processes. */
export async function startTarget(kind: BackendKind, leaseMs: number): Promise<BenchTarget> {
  const kit = await loadBackendKit(kind);
  const server = await startServer(kit, leaseMs);
  return {
    ...server,
    startCandidate: (config) => CandidateProcess.start({ providers: [...kit.providerModules], ...config }, 30_000),
    // The core's default safety margin for this lease, plus what the backend grants below the
    // lease asked for (ZooKeeper: the server's lease is the session, the Elector gets 2/3 of it):
    // the rest is added back too.
    leaseMarginMs: Math.max(50, Math.ceil(leaseMs * 0.02)) + (leaseMs - (kit.grantedLeaseMs?.(leaseMs) ?? leaseMs)),
    ...(kit.followerAllowance ? { followerAllowance: kit.followerAllowance(leaseMs) } : {}),
  };
}

/** Just the private server of `kit` (peers bring their own candidates), stopped at exit if not before. */
export async function startServer(kit: BackendKit, leaseMs: number): Promise<ServerTarget> {
  if (!kit.startBenchServer) throw new Error(`backend ${kit.kind}: its kit starts no bench server`);
  const server = await kit.startBenchServer(leaseMs);
  const remove = onCleanup(() => server.close());
  return {
    kind: kit.kind,
    port: server.port,
    url: (port) => server.url(port),
    counters: () => server.counters(),
    version: () => server.version(),
    counterName: server.counterName,
    description: server.description,
    async close() {
      remove();
      await server.close();
    },
  };
}
