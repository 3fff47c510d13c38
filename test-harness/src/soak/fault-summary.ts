import { FAULT_KINDS } from './fault-catalogue';
import type { FaultRunResult } from './fault-run';
import type { RolloutReport } from './rolling-deployment';

/** The one summary line of a run (soak output, test failure messages). */
export function summarizeRun(r: FaultRunResult): string {
  const kinds = FAULT_KINDS.filter((k) => r.faultCounts[k] > 0)
    .map((k) => `${k} ${r.faultCounts[k]}${k === 'blip' ? ` [${countBy(r.faults.filter((f) => f.kind === k).map((f) => f.target))}]` : ''}`)
    .join(', ');
  const g = r.report.guard;
  const stale = g ? g.staleWrites.length + g.sharedTokens.length : 0;
  return [
    `${r.backend}${r.topology === 'single' ? '' : ` ${r.topology}`}: ${Math.round(r.elapsedMs / 1000)} s, seed ${r.seed}, lease ${r.leaseMs} ms`,
    `faults: ${r.faults.length} (${kinds}) in ${r.episodes} episodes`,
    ...(r.rollout ? [rolloutLine(r.rollout), `migration conflicts: ${r.migrationConflicts}`] : []),
    `terms: ${r.report.intervals.length}`,
    `overlaps: ${r.report.overlaps.length}`,
    `token regressions: ${r.report.tokenRegressions.length}`,
    `stale work: ${r.report.staleWork.length}`,
    `work outside term: ${r.report.workOutsideTerm.length}`,
    `writes accepted: ${g?.accepted ?? 0}, rejected: ${g?.rejected ?? 0}, failed: ${g?.failed ?? 0}`,
    `stale writes: ${stale}`,
    `late recoveries: ${r.recovery.late.length} (max ${Math.round(r.recovery.maxRecoveryMs)} ms)`,
    `followers seeing themselves lead: ${r.selfLeaderFollowers.length}`,
    r.ok ? 'OK' : `FAILED: ${r.problems.join('; ')}${r.dumpedTo ? ` (history in ${r.dumpedTo})` : ''}`,
  ].join(', ');
}

/** `a 3, b 1`: how many times each value occurs, in order of first occurrence. */
function countBy(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
}

/** `rolling steps: 40 (old→dual 10, …), 2 cycles, 1 put off`. */
export function rolloutLine(r: RolloutReport): string {
  return `rolling steps: ${r.steps} (${countBy(r.rolls.map((x) => `${x.from}→${x.to}`))}), ${r.cycles} cycles, ${r.deferred} put off`;
}
