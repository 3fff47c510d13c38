import { runFaultSoak, summarizeRun, RECOVERY_SLACK_MS, type FaultRunResult } from '@conclave/test-harness';
import { MIGRATION_NODE_KINDS, migrateKit } from '@conclave/migrate/testing';
import { zookeeperSessionTimeoutMs } from '@conclave/zookeeper/testing';

// The design card's central use, with real processes, real servers and real faults: a fleet of 5
// candidate processes moves an election from ZooKeeper to MySQL one process at a time (old
// binaries → dual → to-only) and rolls back (to-only → dual → old), never running old and to-only
// processes together. In every step of the rollout one process is replaced, and random faults hit
// the fleet meanwhile (the harness refuses to start a process beside one two kinds away, and
// says so as a problem of the run): SIGKILLs (the process comes back as the same kind) and ~2 s blips of one
// side, every candidate's connections to the private ZooKeeper or to the private MariaDB cut or
// silently blackholed. The split-brain checker reads every process's history on the shared
// monotonic clock, with the writes each leader made to a guarded resource (a Redis key that
// accepts a token only if no greater one came before).
//
// Bound after each heal (the end of an episode: its faults healed and its step done), until a
// leader works again: leaseMs + leaseMs + the ZooKeeper session timeout + 2.5 s of slack for a
// busy machine (`recoveryMarginMs` of the migrate fault environment, where the reasons are). Once
// both sides answer, a migration adds no wait of its own: a dual candidate waits for MySQL only
// while MySQL fails or another candidate holds it, and a dual leader that loses either side gives
// the other back at once. What remains are the backends' own: a killed or cut-off holder's MySQL
// row lasts a lease and its ZooKeeper node the session timeout (1.5 leases here), and the
// Elector's backoff after failed calls is at most a lease.
//
// CONCLAVE_SEED=<n> replays a schedule (the timing of real processes still varies); the same seed
// runs longer with `npm run soak -- --backend migrate --seconds N --seed <n>`.
const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);
const LEASE_MS = 1500;
const BOUND_MS = 2 * LEASE_MS + zookeeperSessionTimeoutMs(LEASE_MS) + RECOVERY_SLACK_MS;

/** The node kind of a leadership interval's process (its candidate id ends with it). */
function kindOf(candidateId: string): string | null {
  return MIGRATION_NODE_KINDS.find((k) => candidateId.endsWith(`-${k}`)) ?? null;
}

/** Each list must be empty; at most 3 items each, so a failure shows what happened. */
function safety(r: FaultRunResult): Record<string, unknown[]> {
  const few = <T>(items: T[]) => items.slice(0, 3);
  return {
    problems: r.problems,
    overlaps: few(r.report.overlaps),
    tokenRegressions: few(r.report.tokenRegressions),
    staleWork: few(r.report.staleWork),
    workOutsideTerm: few(r.report.workOutsideTerm),
    staleWrites: few(r.report.guard?.staleWrites ?? []),
    sharedTokens: few(r.report.guard?.sharedTokens ?? []),
    lateRecoveries: few(r.recovery.late),
  };
}

test(`a rolling migration of 5 processes, forward and back, with SIGKILLs and ZooKeeper and MySQL blips, never has two leaders (seed ${seed})`, async () => {
  const result = await runFaultSoak({ backend: migrateKit, candidates: 5, leaseMs: LEASE_MS, seed, durationMs: 120_000, rolloutCycles: 1 });
  const line = summarizeRun(result);
  // Visible in the test output: how much happened.
  console.log(`rolling migration: ${line}\nreplay: CONCLAVE_SEED=${seed} npx jest packages/migrate/test/rolling-migration.test.ts`);

  expect({ line, ...safety(result) }).toEqual({
    line,
    problems: [],
    overlaps: [],
    tokenRegressions: [],
    staleWork: [],
    workOutsideTerm: [],
    staleWrites: [],
    sharedTokens: [],
    lateRecoveries: [],
  });
  // A leader within the bound after every episode (the run checks each heal against it).
  expect(new Set(result.recovery.recoveries.map((r) => r.boundMs))).toEqual(new Set([BOUND_MS]));
  expect(result.recovery.maxRecoveryMs).toBeLessThanOrEqual(BOUND_MS);
  // The whole way, forward and back, under faults of both kinds.
  expect(result.rollout!.cycles).toBe(1);
  const blips = result.faults.filter((f) => f.kind === 'blip').map((f) => f.target);
  expect(blips.some((t) => t.includes('zookeeper'))).toBe(true);
  expect(blips.some((t) => t.includes('mysql'))).toBe(true);
  expect(result.faultCounts.kill).toBeGreaterThan(0);
  expect(result.report.guard!.accepted).toBeGreaterThan(0);
  // Every kind led, and old processes led again after the last to-only term (the rollback).
  const intervals = result.report.intervals;
  expect(new Set(intervals.map((i) => kindOf(i.candidateId)))).toEqual(new Set(MIGRATION_NODE_KINDS));
  const lastToOnly = Math.max(...intervals.filter((i) => kindOf(i.candidateId) === 'to-only').map((i) => i.startMs));
  expect(intervals.some((i) => kindOf(i.candidateId) === 'old' && i.startMs > lastToOnly)).toBe(true);
}, 200_000);
