import { monotonicMs } from '../history/history-recorder';
import { delay } from '../wait-for';
import type { FaultCluster } from './fault-cluster';

/** What a directed scenario observed, for the test to assert on (with `checkSplitBrain` on the history). */
export interface ScenarioOutcome {
  /** The candidate the fault hit. */
  victim: string;
  /** The candidate elected after the fault (null if none within the wait). */
  successor: string | null;
  /** When the fault began / the successor was elected / the victim reported its revocation (monotonic ms). */
  faultAtMs: number;
  successorElectedAtMs: number | null;
  victimRevokedAtMs: number | null;
  /** The victim's guarded writes and work after the fault began, with its old token. */
  victimWritesAfter: { accepted: number; rejected: number; failed: number };
  victimWorkAfterSuccessor: number;
}

async function waitForSuccessor(cluster: FaultCluster, victim: string, timeoutMs: number): Promise<{ id: string; atMs: number } | null> {
  const until = monotonicMs() + timeoutMs;
  while (monotonicMs() < until) {
    for (const slot of cluster.slots) {
      if (slot.proc.id === victim) continue;
      const elected = [...slot.proc.reports].reverse().find((r) => r.type === 'elected');
      if (elected && slot.proc.leading && cluster.leadingNow(slot)) return { id: slot.proc.id, atMs: elected.atMs };
    }
    await delay(20);
  }
  return null;
}

function outcome(cluster: FaultCluster, victim: string, faultAtMs: number, successor: { id: string; atMs: number } | null): ScenarioOutcome {
  const proc = cluster.processes.find((p) => p.id === victim)!;
  const revoked = proc.reports.find((r) => r.type === 'revoked' && r.atMs >= faultAtMs);
  const writes = proc.writes().filter((w) => w.atMs >= faultAtMs);
  const work = proc.history().filter((e) => e.kind === 'work' && successor && e.atMs >= successor.atMs);
  return {
    victim,
    successor: successor?.id ?? null,
    faultAtMs,
    successorElectedAtMs: successor?.atMs ?? null,
    victimRevokedAtMs: revoked?.atMs ?? null,
    victimWritesAfter: {
      accepted: writes.filter((w) => w.accepted).length,
      rejected: writes.filter((w) => !w.accepted && !w.error).length,
      failed: writes.filter((w) => w.error).length,
    },
    victimWorkAfterSuccessor: work.length,
  };
}

/**
 * Frozen leader (BENCH.md): the leader is SIGSTOPped for 1.5 × lease, then SIGCONTed. Another
 * candidate must take over while it sleeps, and the sleeper must neither work nor get a write
 * accepted after waking.
 */
export async function frozenLeaderScenario(cluster: FaultCluster, takeoverTimeoutMs = 20_000): Promise<ScenarioOutcome> {
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader to freeze');
  const slot = cluster.leader()!;
  const victim = slot.proc.id;
  const proc = slot.proc;
  await delay(200); // let it write a few times with its token
  const faultAtMs = monotonicMs();
  slot.frozen = true;
  proc.freeze();
  try {
    await delay(Math.round(cluster.leaseMs * 1.5));
  } finally {
    proc.thaw();
    slot.frozen = false;
  }
  const successor = await waitForSuccessor(cluster, victim, takeoverTimeoutMs);
  await delay(500); // what the sleeper does on waking
  return outcome(cluster, victim, faultAtMs, successor);
}

/**
 * Silent partition (BENCH.md): the leader's connection goes silent (bytes dropped, no reset).
 * It must step down before another candidate is elected: no work after the new leader's election.
 */
export async function silentPartitionScenario(cluster: FaultCluster, takeoverTimeoutMs = 20_000): Promise<ScenarioOutcome> {
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader to partition');
  const slot = cluster.leader()!;
  const victim = slot.proc.id;
  await delay(200);
  const faultAtMs = monotonicMs();
  slot.proxy.blackhole();
  let successor: { id: string; atMs: number } | null = null;
  try {
    successor = await waitForSuccessor(cluster, victim, takeoverTimeoutMs);
    await delay(300);
  } finally {
    slot.proxy.resume();
  }
  await delay(500);
  return outcome(cluster, victim, faultAtMs, successor);
}

/**
 * Server crash and restart, `rounds` times: SIGKILL of the private server, down `downMs`, started
 * again on the same port and data. Returns, per round, how long after the server served again a
 * candidate led (null: none within `waitMs`).
 */
export async function serverRestartScenario(
  cluster: FaultCluster,
  rounds: number,
  downMs = 1800,
  waitMs = 25_000,
): Promise<Array<number | null>> {
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader before the restarts');
  const waits: Array<number | null> = [];
  for (let i = 0; i < rounds; i++) {
    await cluster.env.killServer();
    await delay(downMs);
    await cluster.env.restartServer();
    waits.push(await cluster.waitForLeader(waitMs));
    await delay(300);
  }
  return waits;
}
