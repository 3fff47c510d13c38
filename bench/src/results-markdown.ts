/**
 * The markdown of a results file: the full report (bench/results/*.md) and the short block shown
 * in bench/README.md. Both come from the JSON alone, so they can be regenerated at any time.
 */
import { isPeer, PEER_TITLES } from './peers/peer-kinds';
import { peerTable } from './peer-table';
import type { ResultsFile } from './results-types';
import { rows, roundsOf, sideBySide, table } from './verdicts';

/** An argument as a POSIX shell would need it typed. */
const shellWord = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** The command line that repeats the run, arguments quoted where the shell needs it. */
export const benchCommand = (argv: readonly string[]): string => `npm run bench --${argv.map((a) => ` ${shellWord(a)}`).join('')}`;

/** The run's command; without its `--note` where the note is shown on its own. */
export function commandOf(f: ResultsFile, keepNote = true): string {
  if (!f.argv) return f.command;
  const argv = keepNote ? f.argv : f.argv.filter((a, i) => !a.startsWith('--note') && !(f.argv![i - 1] === '--note'));
  return benchCommand(argv);
}

/** Inline code that holds any text: a fence longer than any run of backticks inside it. */
function code(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((x) => x.length));
  const fence = '`'.repeat(longest + 1);
  return longest ? `${fence} ${s} ${fence}` : `${fence}${s}${fence}`;
}

/** Free text (a note, an error) kept on its list item's line. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** One line per fact of the run: when, how, on what. */
export function runFacts(f: ResultsFile): string[] {
  const m = f.machine;
  const p = f.plan;
  const versions = [...new Set(f.results.map((r) => r.serverVersion).filter((v): v is string => !!v))];
  const load = `load average ${m.loadavgAtStart.join(' ')} at start${m.loadavgAtEnd ? `, ${m.loadavgAtEnd.join(' ')} at end` : ''} (shared machine)`;
  return [
    `- date: ${f.date}`,
    `- command: ${code(oneLine(commandOf(f)))} (${f.quick ? `QUICK mode: fewer rounds, shorter windows, many-elections scaled down to ${p.manyElections} elections` : 'full run'})`,
    ...(f.commit ? [`- commit: ${f.commit}`] : []),
    ...(f.note ? [`- note: ${oneLine(f.note)}`] : []),
    `- wall time: ${(f.wallMs / 1000).toFixed(1)} s`,
    `- machine: nproc ${m.nproc}, ${m.cpuModel}, ${m.memGiB ?? '?'} GiB, node ${m.node}, ${m.os}; ${load}`,
    ...(versions.length ? [`- servers: ${versions.join(', ')}`] : []),
    `- lease ${f.leaseMs} ms (renew every ${Math.floor(f.leaseMs / 3)} ms, follower retry 600 ms, safety margin 60 ms: core defaults for leaseMs 3000), 3 candidate processes per election, loopback, times from process.hrtime.bigint()`,
    ...(peersOf(f).length ? [`- peers in this run: ${peersOf(f).join(', ')} (each on a private server of its own)`] : []),
    `- ran: ${scenariosRun(f)}`,
  ];
}

/** The plan of the scenarios that ran (an `--only` run leaves the others out of every result). */
function scenariosRun(f: ResultsFile): string {
  const p = f.plan;
  const ran = (k: 'graceful' | 'crash' | 'frozen' | 'partition' | 'steady' | 'many') => f.results.some((r) => r[k] !== undefined);
  const parts = [
    ran('graceful') && `graceful ${roundsOf(p.graceful)}`,
    ran('crash') && `crash ${roundsOf(p.crash)}`,
    ran('frozen') && `frozen ${roundsOf(p.frozen)}`,
    ran('partition') && `partition ${roundsOf(p.partition)}`,
    ran('steady') && `steady-state windows ${p.steadyWindowMs / 1000} s`,
    ran('many') && `many elections ${p.manyElections} × 3 over ${p.manyWindowMs / 1000} s`,
  ].filter((x): x is string => typeof x === 'string');
  return parts.length ? parts.join('; ') : 'no scenario';
}

const peersOf = (f: ResultsFile): string[] => f.peers ?? f.results.map((r) => r.kind).filter(isPeer);

const PEER_TABLE_LEAD =
  'Each figure with its ratio to the best peer on that row (×1.00 = as good as the best peer; lower is better on every row with a ratio).';

/** The whole report. `chart`: the chart's path relative to the markdown file, if there is one. */
export function resultsMarkdown(f: ResultsFile, chart?: string): string {
  const md: string[] = ['# conclave bench results', '', ...runFacts(f), ''];
  for (const r of f.results) {
    const title = isPeer(r.kind) ? `peer: ${PEER_TITLES[r.kind]}` : r.kind;
    const version = r.serverVersion ? ` (${r.serverVersion})` : '';
    md.push(`## ${title}`, '', `server: ${r.server}${version}. Server counter: ${r.counters}. Wall time ${(r.wallMs / 1000).toFixed(1)} s.`, '');
    md.push(table(rows(r, f.leaseMs), isPeer(r.kind) ? r.kind : 'conclave'), '');
  }
  const conclave = f.results.filter((r) => !isPeer(r.kind));
  // With the peers measured in this run, figures from another day would only confuse.
  if (conclave.length) md.push('## side by side', '', sideBySide(conclave, f.leaseMs, peersOf(f).length === 0), '');
  if (peersOf(f).length) {
    md.push('## side by side with the peers (same run)', '', PEER_TABLE_LEAD, '', peerTable(f.results, isPeer), '');
    if (f.skipped?.length) md.push(...f.skipped.map((x) => `- skipped ${oneLine(x)}`), '');
  }
  if (chart) md.push('## distributions', '', `![hand-over and take-over per system](${chart})`, '');
  return md.join('\n');
}

/** The block between the markers in bench/README.md: the run's facts, the headline table, the chart. */
export function readmeBlock(f: ResultsFile, resultsLink: string, chart?: string): string {
  const conclave = f.results.filter((r) => !isPeer(r.kind));
  const headline = peersOf(f).length ? [PEER_TABLE_LEAD, '', peerTable(f.results, isPeer)] : [sideBySide(conclave, f.leaseMs)];
  return [
    `From [${resultsLink}](${resultsLink}):`,
    '',
    ...runFacts(f),
    '',
    ...headline,
    '',
    ...(chart ? [`![graceful hand-over and crash take-over per system](${chart})`, ''] : []),
  ].join('\n');
}
