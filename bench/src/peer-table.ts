/**
 * The side-by-side table of conclave's backends and the peers measured in the same run: one
 * headline figure per scenario and system, each with its ratio to the best peer on that row.
 * Only figures of one run are compared (a shared machine's load moves them all together).
 */
import type { BackendResult } from './results-types';
import type { SystemKind } from './servers';
import { round } from './util';

interface Figure {
  label: string;
  unit: 'ms' | 'units' | '/s';
  /** False for context that is neither good nor bad (where the kill fell in the renew cycle). */
  ratio?: boolean;
  pick(r: BackendResult): number | null;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const FIGURES: Figure[] = [
  { label: 'graceful hand-over p50', unit: 'ms', pick: (r) => r.graceful?.latencyMs.p50 ?? null },
  { label: 'graceful hand-over p99', unit: 'ms', pick: (r) => r.graceful?.latencyMs.p99 ?? null },
  { label: 'crash take-over p50 (raw, from the kill)', unit: 'ms', pick: (r) => r.crash?.latencyMs.p50 ?? null },
  { label: 'crash take-over: lease left at the kill p50 (context, no ratio)', unit: 'ms', ratio: false, pick: (r) => r.crash?.leaseLeftMs?.p50 ?? null },
  { label: 'crash take-over: overhead beyond the lease left p50', unit: 'ms', pick: (r) => r.crash?.overheadMs?.p50 ?? null },
  { label: 'crash take-over: overhead beyond the lease left p99', unit: 'ms', pick: (r) => r.crash?.overheadMs?.p99 ?? null },
  {
    label: 'frozen leader: stale work units after waking (all rounds)',
    unit: 'units',
    pick: (r) => (r.frozen?.rounds.length ? sum(r.frozen.rounds.map((x) => x.staleWorkAfterWake)) : null),
  },
  {
    label: "silent partition: work units after the new leader's election (all rounds)",
    unit: 'units',
    pick: (r) => (r.partition?.rounds.length ? sum(r.partition.rounds.map((x) => x.workAfterNewLeader)) : null),
  },
  { label: 'steady state: leader round trips/s', unit: '/s', pick: (r) => r.steady?.leader.clientSendsPerSec ?? null },
  { label: 'steady state: follower round trips/s', unit: '/s', pick: (r) => r.steady?.follower.clientSendsPerSec ?? null },
];

function show(v: number, unit: Figure['unit']): string {
  if (unit === 'ms') return Math.abs(v) >= 1000 ? `${round(v / 1000, 2)} s` : `${round(v, 1)} ms`;
  if (unit === '/s') return `${round(v, 2)}/s`;
  return String(v);
}

/** `value` against the best (lowest) peer figure: ×ratio, or a word where a ratio means nothing. */
function ratio(value: number, best: number | null): string {
  if (best === null) return '';
  if (best <= 0) return value <= best ? ' (best)' : ` (best peer ${best})`;
  return ` (×${(value / best).toFixed(2)})`;
}

export function peerTable(results: readonly BackendResult[], isPeer: (k: SystemKind) => boolean): string {
  const cols = results.map((r) => ({ r, name: isPeer(r.kind) ? r.kind : `conclave ${r.kind}` }));
  const lines = [`| scenario | ${cols.map((c) => c.name).join(' | ')} |`, `|---|${cols.map(() => '---|').join('')}`];
  for (const f of FIGURES) {
    const values = cols.map((c) => f.pick(c.r));
    if (values.every((v) => v === null)) continue;
    const peerValues = cols.map((c, i) => (isPeer(c.r.kind) ? values[i] : null)).filter((v): v is number => v !== null && v !== undefined);
    const best = peerValues.length && f.ratio !== false ? Math.min(...peerValues) : null;
    lines.push(`| ${f.label} | ${values.map((v) => (v === null ? '—' : `${show(v, f.unit)}${ratio(v, best)}`)).join(' | ')} |`);
  }
  return lines.join('\n');
}
