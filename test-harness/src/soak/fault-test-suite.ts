import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { relative } from 'node:path';
import { checkSplitBrain, summarize, type SplitBrainReport } from '../history/split-brain-checker';
import { seedFromEnv } from '../faults/prng';
import type { BackendKit } from '../kits/backend-kit';
import { kitLabel } from '../kits/load-backend-kit';
import { FaultCluster } from './fault-cluster';
import type { FaultTopology } from './fault-environment';
import { runFaultSoak } from './fault-run';
import { summarizeRun } from './fault-summary';
import { frozenLeaderScenario, serverRestartScenario, silentPartitionScenario } from './fault-scenarios';

export interface FaultSuiteOptions {
  /** Seed of the randomized run unless `FAULT_SEED` is set. */
  seed: number;
  /** Length of the randomized run, ms, unless `FAULT_RUN_MS` is set. Default 30 000, as every topology's run. */
  runMs?: number;
  /**
   * A known backend bug that breaks liveness intermittently (a leader does not come back in time
   * after a fault). Unless `FAULT_KNOWN_BUGS=1`: the server-restart test is skipped with this
   * reason, and the randomized run reports late recoveries without failing; safety (overlaps,
   * stale work, stale writes, token order) still fails the test.
   */
  knownLivenessBug?: string;
  /**
   * Rounds of the server crash-and-restart test. Default 4, or 12 while a known liveness bug is
   * being reproduced; a backend can keep more rounds as a regression guard for a fixed one.
   */
  restartRounds?: number;
}

/** The test file that runs, relative to the working directory (for replay lines). */
function testFile(): string {
  return relative(process.cwd(), expect.getState().testPath ?? '');
}

/**
 * The fault tests of one backend, for its package's `test/faults.test.ts`, given its kit (or
 * the kit's name, see `loadBackendKit`): the two
 * directed BENCH scenarios (frozen leader, silent partition) on one private server, and a short
 * seeded randomized run (`FAULT_SEED=<n>` replays a seed, `FAULT_RUN_MS` changes its length).
 * Every process and server started is stopped in afterAll/finally, even on failure.
 */
export function describeFaultSuite(kit: BackendKit | string, options: FaultSuiteOptions): void {
  const backend = kitLabel(kit);
  const seed = seedFromEnv('FAULT_SEED', options.seed);
  const runMs = Number(process.env.FAULT_RUN_MS ?? options.runMs ?? 30_000);
  const tolerateLiveness = options.knownLivenessBug !== undefined && process.env.FAULT_KNOWN_BUGS !== '1';

  describe(`${backend} under faults`, () => {
    let cluster: FaultCluster | null = null;
    beforeAll(async () => {
      cluster = await FaultCluster.start({ backend: kit, label: `${backend}-directed` });
    }, 90_000);
    afterAll(async () => {
      await cluster?.close();
    }, 60_000);

    test('frozen leader: replaced while asleep, no work and no accepted write with its token after waking', async () => {
      const c = cluster!;
      const o = await frozenLeaderScenario(c);
      expect(o.successor).not.toBeNull();
      expect(o.victimWorkAfterSuccessor).toBe(0);
      expect(o.victimWritesAfter.accepted).toBe(0);
      const report = checkSplitBrain(c.history(), { writes: c.writes() });
      const detail = summarize(report);
      expect({ detail, overlaps: report.overlaps, staleWork: report.staleWork, regressions: report.tokenRegressions }).toEqual({
        detail,
        overlaps: [],
        staleWork: [],
        regressions: [],
      });
      expect(report.guard!.staleWrites).toEqual([]);
    }, 60_000);

    test('silent partition: the leader steps down before another is elected', async () => {
      const c = cluster!;
      const o = await silentPartitionScenario(c);
      expect(o.successor).not.toBeNull();
      expect(o.victimRevokedAtMs).not.toBeNull();
      expect(o.victimRevokedAtMs!).toBeLessThan(o.successorElectedAtMs!);
      expect(o.victimWorkAfterSuccessor).toBe(0);
      const report = checkSplitBrain(c.history(), { writes: c.writes() });
      expect(report.overlaps).toEqual([]);
      expect(report.staleWork).toEqual([]);
      expect(report.guard!.staleWrites).toEqual([]);
    }, 60_000);

    const restartTest = tolerateLiveness ? test.skip : test;
    // More rounds where a known bug is being reproduced (it shows up in about one restart in ten).
    const rounds = options.restartRounds ?? (options.knownLivenessBug ? 12 : 4);
    const restartName = options.knownLivenessBug
      ? `server crash and restart ×${rounds}: a leader within leaseMs + margin each time [KNOWN BUG, run with FAULT_KNOWN_BUGS=1: ${options.knownLivenessBug}]`
      : `server crash and restart ×${rounds}: a leader within leaseMs + margin each time`;
    restartTest(restartName, async () => {
      const c = cluster!;
      const bound = c.leaseMs + c.env.recoveryMarginMs;
      const waits = await serverRestartScenario(c, rounds, 1800, bound + 5000);
      expect(waits.map((w) => w !== null && w <= bound)).toEqual(waits.map(() => true));
      const report = checkSplitBrain(c.history(), { writes: c.writes() });
      expect(report.overlaps).toEqual([]);
      expect(report.tokenRegressions).toEqual([]);
      expect(report.guard!.staleWrites).toEqual([]);
    }, 40_000 + rounds * 30_000);

    test(`seeded random faults for ${Math.round(runMs / 1000)} s (seed ${seed}; replay with FAULT_SEED=${seed})`, async () => {
      const result = await runFaultSoak({ backend: kit, durationMs: runMs, seed });
      const line = summarizeRun(result);
      const late = result.recovery.late.length;
      const safetyProblems = result.problems.filter((p) => !(tolerateLiveness && (p.includes('not followed by a leader') || p.includes('saw themselves as leader'))));
      if (tolerateLiveness && late > 0) {
        console.warn(`KNOWN BUG (${options.knownLivenessBug}): ${late} late recoveries tolerated\n${line}`);
      }
      if (safetyProblems.length > 0) {
        throw new Error(`${line}\nreplay: FAULT_SEED=${seed} npx jest ${testFile()}`);
      }
      expect(result.faults.length).toBeGreaterThan(5);
      expect(result.report.overlaps).toEqual([]);
      expect(result.report.guard!.staleWrites).toEqual([]);
    }, runMs + 75_000);
  });
}

/**
 * The safety verdict of a history, for a directed test's `expect`: every list must be empty.
 * `detail` (the summary line) rides along so a failure shows the counts.
 */
export function safetyProblems(cluster: FaultCluster): { detail: string; problems: Record<string, unknown[]> } {
  const report: SplitBrainReport = checkSplitBrain(cluster.history(), { writes: cluster.writes() });
  // Each list compact (a failure shows what happened, not thousands of objects): at most 5 items.
  const few = (items: string[]) => (items.length > 5 ? [...items.slice(0, 5), `… ${items.length - 5} more`] : items);
  const work = (w: { process?: string; candidateId: string; token: number; atMs: number }) => `${w.process ?? w.candidateId} token ${w.token} at ${Math.round(w.atMs)}`;
  const problems: Record<string, unknown[]> = {
    overlaps: few(
      report.overlaps.map(([a, b]) => `${a.process} (token ${a.token}) and ${b.process} (token ${b.token}) for ${Number.isFinite(Math.min(a.endMs, b.endMs)) ? `${Math.round(Math.min(a.endMs, b.endMs) - b.startMs)} ms` : "the rest of the history"}`),
    ),
    tokenRegressions: few(report.tokenRegressions.map(([a, b]) => `${a.process} ${a.token} then ${b.process} ${b.token}`)),
    staleWork: few(report.staleWork.map(work)),
    workOutsideTerm: few(report.workOutsideTerm.map(work)),
    staleWrites: few((report.guard?.staleWrites ?? []).map(work)),
    sharedTokens: few((report.guard?.sharedTokens ?? []).map(([a, b]) => `token ${a.token}: ${a.process} and ${b.process}`)),
  };
  return { detail: summarize(report), problems };
}

export interface TopologyRunOptions {
  /** Seed of the run unless `FAULT_SEED` is set. */
  seed: number;
  /** Length, ms, unless `FAULT_RUN_MS` is set. Default 30 000. */
  runMs?: number;
  /** Candidate processes. Default 3. */
  candidates?: number;
}

/**
 * One `test` running a short seeded fault run of the kit's backend in `topology` (same checks as the
 * single-server runs: overlaps, token order, stale work, stale writes, late recovery). A failure
 * prints the summary line and the command that replays the seed.
 */
export function topologyFaultRunTest(kit: BackendKit | string, topology: FaultTopology, options: TopologyRunOptions): void {
  const backend = kitLabel(kit);
  const seed = seedFromEnv('FAULT_SEED', options.seed);
  const runMs = Number(process.env.FAULT_RUN_MS ?? options.runMs ?? 30_000);
  const name = `${backend} ${topology}: seeded random faults for ${Math.round(runMs / 1000)} s (seed ${seed})`;
  test(name, async () => {
    const result = await runFaultSoak({ backend: kit, topology, durationMs: runMs, seed, ...(options.candidates ? { candidates: options.candidates } : {}) });
    const line = summarizeRun(result);
    if (!result.ok) {
      const file = testFile();
      throw new Error(
        `${line}\nreplay: FAULT_SEED=${seed} npx jest ${file} -t '${backend} ${topology}: seeded'` +
          `\n    or: npm run soak -- --backend ${backend} --topology ${topology} --seconds ${Math.round(runMs / 1000)} --seed ${seed}`,
      );
    }
    expect(result.faults.length).toBeGreaterThan(3);
    expect(result.report.overlaps).toEqual([]);
  }, runMs + 120_000);
}
