/**
 * The chart of a results file, as plain SVG text: per system, the graceful hand-over times, the
 * crash take-over times, and the take-over overhead beyond the lease left at the kill — every
 * round as a dot over a box plot, on a log-scale x axis. Same input, same bytes.
 */
import { isPeer } from './peers/peer-kinds';
import { commandOf } from './results-markdown';
import type { BackendResult, ResultsFile } from './results-types';
import { formatMs, logAxis } from './chart-axis';
import { percentile } from './util';

interface Panel {
  title: string;
  samples(r: BackendResult): number[] | undefined;
}

const PANELS: Panel[] = [
  { title: 'graceful hand-over: SIGTERM to the leader → another candidate elected', samples: (r) => r.graceful?.samples },
  { title: 'crash take-over, raw: SIGKILL to the leader → another candidate elected', samples: (r) => r.crash?.samples },
  {
    title: 'crash take-over: overhead beyond the lease the killed leader had left (the part that can be improved)',
    samples: (r) => r.crash?.overheadSamples,
  },
];

const WIDTH = 960;
const LABEL_X = 12;
const PLOT_X0 = 200;
const PLOT_X1 = 740;
/** Values ≤ 0 (an overhead can be, within the measurement's bound) have no place on a log axis: a gutter left of it. */
const GUTTER_X = PLOT_X0 - 22;
const STATS_X = 756;
const ROW_H = 24;
const CONCLAVE_COLOUR = '#1f5fa8';
const PEER_COLOUR = '#c25a00';

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const f1 = (v: number) => v.toFixed(1);
const systemName = (r: BackendResult) => (isPeer(r.kind) ? r.kind : `conclave ${r.kind}`);

/** Deterministic vertical spread of the dots of one row (golden-ratio sequence, no randomness). */
const jitter = (i: number) => (((i * 0.6180339887) % 1) - 0.5) * ROW_H * 0.55;

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${f1(x)}" y="${f1(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(s)}</text>`;
}

function panel(p: Panel, results: readonly BackendResult[], top: number): { svg: string[]; height: number } {
  const rowsWithData = results.map((r) => ({ r, xs: p.samples(r) ?? [] })).filter((x) => x.xs.length > 0);
  const out: string[] = [text(LABEL_X, top + 16, p.title, 'class="title"')];
  if (rowsWithData.length === 0) {
    out.push(text(PLOT_X0, top + 40, 'no samples in this results file', 'class="muted"'));
    return { svg: out, height: 56 };
  }
  const axis = logAxis(rowsWithData.flatMap((x) => x.xs), PLOT_X0, PLOT_X1);
  const anyNonPositive = rowsWithData.some((x) => x.xs.some((v) => v <= 0));
  const y0 = top + 28;
  const y1 = y0 + rowsWithData.length * ROW_H;
  for (const t of axis.ticks) {
    out.push(`<line x1="${f1(t.x)}" y1="${f1(y0)}" x2="${f1(t.x)}" y2="${f1(y1)}" class="${t.major ? 'grid major' : 'grid'}"/>`);
    if (t.label) out.push(text(t.x, y1 + 14, t.label, 'class="tick" text-anchor="middle"'));
  }
  if (anyNonPositive) out.push(text(GUTTER_X, y1 + 14, '≤ 0', 'class="tick" text-anchor="middle"'));
  rowsWithData.forEach(({ r, xs }, i) => {
    const cy = y0 + i * ROW_H + ROW_H / 2;
    const colour = isPeer(r.kind) ? PEER_COLOUR : CONCLAVE_COLOUR;
    const sorted = [...xs].sort((a, b) => a - b);
    const at = (v: number) => (v <= 0 ? GUTTER_X : axis.x(v));
    const q = (pc: number) => at(percentile(sorted, pc)!);
    if (i % 2 === 1) out.push(`<rect x="${LABEL_X}" y="${f1(cy - ROW_H / 2)}" width="${WIDTH - 2 * LABEL_X}" height="${ROW_H}" class="band"/>`);
    out.push(text(LABEL_X, cy + 4, systemName(r), `fill="${colour}"`));
    out.push(`<line x1="${f1(at(sorted[0]!))}" y1="${f1(cy)}" x2="${f1(at(sorted[sorted.length - 1]!))}" y2="${f1(cy)}" stroke="${colour}" class="whisker"/>`);
    out.push(`<rect x="${f1(q(25))}" y="${f1(cy - 6)}" width="${f1(Math.max(1, q(75) - q(25)))}" height="12" stroke="${colour}" class="box"/>`);
    xs.forEach((v, k) => out.push(`<circle cx="${f1(at(v))}" cy="${f1(cy + jitter(k))}" r="2.4" fill="${colour}" class="dot"/>`));
    out.push(`<line x1="${f1(q(50))}" y1="${f1(cy - 8)}" x2="${f1(q(50))}" y2="${f1(cy + 8)}" stroke="${colour}" class="median"/>`);
    const p99 = q(99);
    out.push(`<path d="M${f1(p99)} ${f1(cy - 8)} l-4 -6 h8 z" fill="${colour}"/>`);
    const stats = `p50 ${formatMs(percentile(sorted, 50)!)} · p99 ${formatMs(percentile(sorted, 99)!)} · n=${xs.length}`;
    out.push(text(STATS_X, cy + 4, stats, 'class="stats"'));
  });
  return { svg: out, height: y1 - top + 26 };
}

/** Whether the file has any sample the chart shows (a run of `--only steady`, say, has none). */
export const hasDistributions = (f: ResultsFile): boolean => f.results.some((r) => PANELS.some((p) => (p.samples(r)?.length ?? 0) > 0));

export function distributionsSvg(f: ResultsFile): string {
  const head = [
    text(LABEL_X, 22, 'conclave bench: hand-over and take-over per system (log scale)', 'class="h1"'),
    text(LABEL_X, 40, `${f.date} · ${commandOf(f, false)}${f.quick ? ' (quick)' : ''} · ${f.machine.nproc} × ${f.machine.cpuModel}, node ${f.machine.node}`, 'class="muted"'),
    ...(f.note ? [text(LABEL_X, 56, `note: ${f.note.length > 150 ? `${f.note.slice(0, 149)}…` : f.note}`, 'class="muted"')] : []),
    text(LABEL_X, f.note ? 74 : 58, `dots: rounds · box: p25–p75 · bar: p50 · ▼: p99 (nearest rank) · line: min–max · blue: conclave${f.results.some((r) => isPeer(r.kind)) ? ', orange: peers' : ''}`, 'class="muted"'),
  ];
  const body: string[] = [];
  let top = f.note ? 84 : 68;
  for (const p of PANELS) {
    const { svg, height } = panel(p, f.results, top);
    body.push(...svg);
    top += height;
  }
  const height = Math.ceil(top + 8);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    '<style>',
    '.h1{font-size:15px;font-weight:bold} .title{font-weight:bold} .muted,.tick{fill:#555;font-size:11px} .stats{font-size:11px}',
    '.grid{stroke:#e3e3e3} .grid.major{stroke:#c8c8c8} .band{fill:#f6f6f6} .whisker{stroke-width:1} .box{fill:none;stroke-width:1.2}',
    '.median{stroke-width:2.5} .dot{fill-opacity:0.45}',
    '</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...head,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
