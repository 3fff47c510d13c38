import { monotonicMs } from '../history/history-recorder';
import { delay } from '../wait-for';
import type { FaultProxy } from '../faults/fault-proxy';
import type { CandidateSlot, FaultCluster } from './fault-cluster';

/** What a directed scenario observed, for the test to assert on (with `checkSplitBrain` on the history). */
export interface ScenarioOutcome {
  /** The candidate process the fault hit (`<id>@<pid>`). */
  victim: string;
  /** The process elected after the fault (null if none within the wait). */
  successor: string | null;
  /** When the fault began / the successor was elected / the victim reported its revocation (monotonic ms). */
  faultAtMs: number;
  successorElectedAtMs: number | null;
  victimRevokedAtMs: number | null;
  /**
   * The victim's guarded writes, with its old token, stamped after the fault began (a frozen
   * leader: after it was woken, as a write stamped before the stop took effect was still its own).
   */
  victimWritesAfter: { accepted: number; rejected: number; failed: number };
  victimWorkAfterSuccessor: number;
}

async function waitForSuccessor(cluster: FaultCluster, victim: string, timeoutMs: number): Promise<{ id: string; atMs: number } | null> {
  const until = monotonicMs() + timeoutMs;
  while (monotonicMs() < until) {
    for (const slot of cluster.slots) {
      if (slot.proc.key === victim) continue;
      const elected = [...slot.proc.reports].reverse().find((r) => r.type === 'elected');
      if (elected && slot.proc.leading && cluster.leadingNow(slot)) return { id: slot.proc.key, atMs: elected.atMs };
    }
    await delay(20);
  }
  return null;
}

function outcome(
  cluster: FaultCluster,
  victim: string,
  faultAtMs: number,
  successor: { id: string; atMs: number } | null,
  writesFromMs = faultAtMs,
): ScenarioOutcome {
  const proc = cluster.processes.find((p) => p.key === victim)!;
  const revoked = proc.reports.find((r) => r.type === 'revoked' && r.atMs >= faultAtMs);
  const writes = proc.writes().filter((w) => w.atMs >= writesFromMs);
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
 * Frozen leader (a bench scenario, bench/README.md): the leader is SIGSTOPped for 1.5 × lease, then SIGCONTed. Another
 * candidate must take over while it sleeps, and the sleeper must neither work nor get a write
 * accepted after waking.
 */
export async function frozenLeaderScenario(cluster: FaultCluster, takeoverTimeoutMs = 20_000): Promise<ScenarioOutcome> {
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader to freeze');
  const slot = cluster.leader()!;
  const victim = slot.proc.key;
  const proc = slot.proc;
  await delay(200); // let it write a few times with its token
  const faultAtMs = monotonicMs();
  slot.frozen = true;
  proc.freeze();
  // SIGSTOP takes effect a little after it is sent: a write stamped in between, while the lease
  // still ran, is the leader's own. Once SIGCONT is sent, every stamp is one taken after waking.
  let wokenAtMs: number;
  try {
    await delay(Math.round(cluster.leaseMs * 1.5));
  } finally {
    wokenAtMs = monotonicMs();
    proc.thaw();
    slot.frozen = false;
  }
  const successor = await waitForSuccessor(cluster, victim, takeoverTimeoutMs);
  await delay(500); // what the sleeper does on waking
  return outcome(cluster, victim, faultAtMs, successor, wokenAtMs);
}

/**
 * Silent partition (a bench scenario, bench/README.md): the leader's connection goes silent (bytes dropped, no reset).
 * It must step down before another candidate is elected: no work after the new leader's election.
 */
export async function silentPartitionScenario(cluster: FaultCluster, takeoverTimeoutMs = 20_000): Promise<ScenarioOutcome> {
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader to partition');
  const slot = cluster.leader()!;
  const victim = slot.proc.key;
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

/**
 * A server without persistence crashes while a candidate leads and comes back empty, once per
 * entry of `downs` (its down time, ms). In every other round the leader's link is slow (a
 * quarter lease each way) from the crash until a lease after the restart, so the followers
 * reach the empty server before the leader's next renewal does. Nobody may be granted a new
 * term on the empty server while the old leader's lease can still make its `isLeader()` true:
 * the history must show no overlap. Returns, per round, how long after the restart a candidate
 * led (null: none within `waitMs`).
 */
export async function emptyRestartScenario(
  cluster: FaultCluster,
  downs: readonly number[] = [1500, 1500, 300, 300, 800, 800],
  serverIndex = 0,
  waitMs = 25_000,
): Promise<Array<number | null>> {
  if (!cluster.env.restartLosesState) throw new Error(`the ${cluster.topology} topology keeps its data across restarts`);
  const server = cluster.env.servers[serverIndex]!;
  const waits: Array<number | null> = [];
  for (const [round, downMs] of downs.entries()) {
    if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader before the crash');
    // Let the leader renew once or twice first, so its lease is well alive at the crash.
    await delay(cluster.leaseMs / 2);
    const leader = cluster.leader();
    const slow = round % 2 === 1 ? (leader?.links[serverIndex] ?? null) : null;
    await server.kill();
    slow?.delay(Math.round(cluster.leaseMs / 4));
    try {
      await delay(downMs);
      await server.restart();
      waits.push(await cluster.waitForLeader(waitMs));
      await delay(Math.max(0, cluster.leaseMs - (waits[waits.length - 1] ?? 0)));
    } finally {
      slow?.delay(0);
    }
    // Past every lease granted before the crash, so the next round starts from one leader.
    await delay(cluster.leaseMs);
  }
  return waits;
}

/**
 * Redlock over three masters: the leader A loses its link to one master (`cut`: reset and
 * refused, or `blackhole`: silent), and once A's key there has expired another master restarts
 * empty while A still holds the third: the master A lost and the empty one form a majority for
 * anyone else, while A's `isLeader()` runs to the end of the lease its last majority granted
 * (and A's next renewal may repair its key on the empty master). With `slow`, A's link to the
 * restarting master is slow (a quarter lease each way) from the crash until a lease later, so
 * the others reach it first. Nobody may lead while A can: no overlap.
 */
export async function quorumMinorityRestartScenario(
  cluster: FaultCluster,
  options: { cutServer?: number; restartServer?: number; downMs?: number; how?: 'cut' | 'blackhole'; slow?: boolean } = {},
): Promise<ScenarioOutcome> {
  const cutServer = options.cutServer ?? 2;
  const restartServer = options.restartServer ?? 1;
  if (cluster.env.servers.length < 3) throw new Error('needs three servers');
  if ((await cluster.waitForLeader(30_000)) === null) throw new Error('no leader before the faults');
  const slot = cluster.leader()!;
  const victim = slot.proc.key;
  await delay(cluster.leaseMs / 3);
  const faultAtMs = monotonicMs();
  const link = slot.links[cutServer]!;
  const slowLink = options.slow ? slot.links[restartServer]! : null;
  if (options.how === 'blackhole') link.blackhole();
  else link.cut();
  let successor: { id: string; atMs: number } | null = null;
  try {
    // A's key on the master it cannot reach expires a lease after its last renewal there.
    await delay(cluster.leaseMs * 0.9);
    await cluster.env.servers[restartServer]!.kill();
    slowLink?.delay(Math.round(cluster.leaseMs / 4));
    await delay(options.downMs ?? 150);
    await cluster.env.servers[restartServer]!.restart();
    successor = await waitForSuccessor(cluster, victim, cluster.leaseMs * 3);
    await delay(cluster.leaseMs);
  } finally {
    slowLink?.delay(0);
    link.resume();
  }
  await delay(500);
  return outcome(cluster, victim, faultAtMs, successor);
}

/**
 * Two processes with one candidate id (the `duplicate-id` topology): the leading duplicate is,
 * in turn, frozen past its lease, killed and replaced by a new process with the same id, and
 * told to step down, so that the other one (and the replacement) campaigns while it holds or
 * has just held the lease under that id. Returns how many times a duplicate led.
 */
export async function duplicateIdScenario(cluster: FaultCluster): Promise<number> {
  if (cluster.topology !== 'duplicate-id') throw new Error('needs the duplicate-id topology');
  const dups = cluster.slots.filter((s) => s.proc.id === cluster.slots[0]!.proc.id);
  // Let both start and settle: the second one campaigned while the first led.
  await delay(cluster.leaseMs * 2);
  const steps: Array<(slot: (typeof dups)[number]) => Promise<void>> = [
    async (slot) => {
      slot.frozen = true;
      slot.proc.freeze();
      await delay(cluster.leaseMs * 1.5);
      slot.proc.thaw();
      slot.frozen = false;
    },
    async (slot) => {
      slot.proc.kill('SIGKILL');
      await slot.proc.waitForExit();
      await delay(100);
      await cluster.spawn(slot);
    },
    async (slot) => {
      slot.proc.send({ type: 'stepDown' });
      await delay(cluster.leaseMs);
    },
  ];
  let dupLed = 0;
  const bound = cluster.leaseMs + cluster.env.recoveryMarginMs;
  const waitForLeader = async () => {
    if ((await cluster.waitForLeader(bound)) === null) {
      const logged = cluster.processes.flatMap((p) => p.reports.filter((r) => r.type === 'log')).pop();
      throw new Error(`no leader within ${bound} ms${logged && logged.type === 'log' ? `; candidates logged: ${JSON.stringify(logged.message)}` : ''}`);
    }
  };
  for (const step of steps) {
    await waitForLeader();
    // Make a duplicate lead: step the other leader down until one of the duplicates leads.
    for (let i = 0; i < 5; i++) {
      const leader = cluster.leader();
      if (leader && dups.includes(leader)) break;
      leader?.proc.send({ type: 'stepDown' });
      await delay(cluster.leaseMs);
      await waitForLeader();
    }
    const leader = cluster.leader();
    if (leader && dups.includes(leader)) {
      dupLed++;
      await step(leader);
    }
    await delay(cluster.leaseMs);
  }
  return dupLed;
}

/** The index of the server `slot`'s client is connected to (through its proxies), or null. */
export function connectedServer(slot: CandidateSlot): number | null {
  const i = slot.links.findIndex((l) => l.openConnections() > 0);
  return i < 0 ? null : i;
}

export interface EnsembleScenarioResult {
  /** One line per step: what was done, to which server, and how long until a leader (ms). */
  steps: string[];
  /** Per step: ms from the heal until some candidate led (null: none within the bound). */
  waits: Array<number | null>;
}

/**
 * ZooKeeper ensemble of three, in turn: (0) the stale view of an isolated follower (see
 * `staleFollowerStep`); (1) the server the leader's client uses — moved to a
 * follower first if it used the ensemble's leader — is isolated from its peers, silently, long
 * enough for the others to give it up, elect, and expire the leader's session
 * (`env.serverElectionMs` + `env.sessionTimeoutMs`), while the client still reaches it and may read its
 * stale state; (2) the same with resets; (3) the ensemble's leader is killed and restarted; (4)
 * the leader's client is cut from its server (it must move to another, or lose leadership before
 * anyone else leads). The history must show no overlap; after each heal a leader within `boundMs`.
 */
export async function ensembleScenario(cluster: FaultCluster, boundMs: number): Promise<EnsembleScenarioResult> {
  const env = cluster.env;
  if (env.topology !== 'ensemble') throw new Error('needs the ensemble topology');
  // The ensemble's kit says how long its servers keep a silent client's session.
  const sessionMs = env.sessionTimeoutMs ?? cluster.leaseMs;
  const steps: string[] = [];
  const waits: Array<number | null> = [];
  const leaderSlot = async (): Promise<CandidateSlot> => {
    if ((await cluster.waitForLeader(boundMs)) === null) throw new Error(`no leader within ${boundMs} ms`);
    return cluster.leader()!;
  };
  const settle = async (label: string) => {
    const wait = await cluster.waitForLeader(boundMs);
    waits.push(wait);
    steps.push(`${label}: leader after ${wait === null ? 'none' : `${Math.round(wait)} ms`}`);
    await delay(cluster.leaseMs);
  };
  if (env.isolateServer && env.healServers) {
    await staleFollowerStep(cluster, boundMs, leaderSlot, settle);
  } else {
    steps.push('stale follower: skipped, the ensemble launcher cannot isolate a server');
  }
  for (const how of ['silent', 'cut'] as const) {
    if (!env.isolateServer || !env.healServers) {
      steps.push(`isolate (${how}): skipped, the ensemble launcher cannot isolate a server`);
      continue;
    }
    const slot = await leaderSlot();
    let server = connectedServer(slot) ?? 0;
    const ensembleLeader = (await env.ensembleLeader?.()) ?? null;
    if (server === ensembleLeader) {
      // Move the client to a follower: the stale reads of an isolated follower are the case.
      const link = slot.links[server]!;
      link.cut();
      const until = monotonicMs() + sessionMs;
      while (monotonicMs() < until && (connectedServer(slot) ?? server) === server) await delay(20);
      link.resume();
      server = connectedServer(slot) ?? server;
    }
    env.isolateServer(server, how);
    try {
      await delay((env.serverElectionMs ?? 0) + sessionMs);
    } finally {
      env.healServers();
    }
    await settle(`isolate server ${server} (${how}; ensemble leader ${ensembleLeader}) under ${slot.proc.key}`);
  }
  {
    await leaderSlot();
    const index = (await env.ensembleLeader?.()) ?? 0;
    await env.servers[index]!.kill();
    await delay(1000);
    await env.servers[index]!.restart();
    await settle(`ensemble leader (server ${index}) killed, restarted after 1 s`);
  }
  {
    const slot = await leaderSlot();
    const server = connectedServer(slot) ?? 0;
    const link = slot.links[server]!;
    link.cut();
    try {
      await delay(2 * cluster.leaseMs);
    } finally {
      link.resume();
    }
    await settle(`${slot.proc.key} cut from server ${server}`);
  }
  return { steps, waits };
}

/**
 * The stale view of an isolated follower: the followers' clients are moved to one follower
 * server S and then stand still (their links to S blackholed); the leader steps down (its node
 * goes, S applies that); S is isolated from its peers, so it keeps answering reads from that copy
 * while the others expire the followers' sessions and the old leader leads again; then the
 * followers wake with their link to S intact and campaign against a copy that shows their own
 * node first. None of them may lead beside the real leader.
 */
async function staleFollowerStep(
  cluster: FaultCluster,
  boundMs: number,
  leaderSlot: () => Promise<CandidateSlot>,
  settle: (label: string) => Promise<void>,
): Promise<void> {
  const env = cluster.env;
  // The ensemble's kit says how long its servers keep a silent client's session.
  const sessionMs = env.sessionTimeoutMs ?? cluster.leaseMs;
  const leader = await leaderSlot();
  const ensembleLeader = (await env.ensembleLeader?.()) ?? 0;
  const s = env.servers.findIndex((_, i) => i !== ensembleLeader);
  const followers = cluster.slots.filter((x) => x !== leader);
  const cut: FaultProxy[] = [leader.links[s]!, ...followers.flatMap((f) => f.links.filter((_, i) => i !== s))];
  const held = followers.map((f) => f.links[s]!);
  cut.forEach((l) => l.cut());
  try {
    const until = monotonicMs() + sessionMs;
    while (monotonicMs() < until && !followers.every((f) => connectedServer(f) === s)) await delay(20);
    held.forEach((l) => l.blackhole());
    leader.proc.send({ type: 'stepDown' });
    await delay(500);
    env.isolateServer!(s, 'silent');
    try {
      // The quorum expires the followers' sessions and the old leader leads again.
      const deadline = monotonicMs() + boundMs;
      while (monotonicMs() < deadline && !cluster.leadingNow(leader)) await delay(20);
      held.forEach((l) => l.resume());
      await delay(4000);
    } finally {
      env.healServers!();
    }
  } finally {
    held.forEach((l) => l.resume());
    cut.forEach((l) => l.resume());
  }
  await settle(`stale follower: ${followers.map((f) => f.proc.key).join(', ')} on isolated server ${s} after ${leader.proc.key} stepped down`);
}
