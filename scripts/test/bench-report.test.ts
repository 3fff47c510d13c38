/**
 * The bench's report, from a fixture results file: the tables and the chart are generated from
 * the JSON alone, byte for byte the same each time, escaped, with the right ratios.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distributionsSvg, escapeXml, hasDistributions } from '../../bench/src/chart-svg';
import { formatMs, logAxis } from '../../bench/src/chart-axis';
import { replaceBetweenMarkers } from '../../bench/src/markers';
import { peerTable } from '../../bench/src/peer-table';
import { isPeer } from '../../bench/src/peers/peer-kinds';
import { readmeBlock, resultsMarkdown } from '../../bench/src/results-markdown';
import type { ResultsFile } from '../../bench/src/results-types';

const fixture = (): ResultsFile => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'bench-results.json'), 'utf8')) as ResultsFile;

const rowOf = (table: string, label: string) => table.split('\n').find((l) => l.startsWith(`| ${label} |`));

describe('bench report', () => {
  it('generates the same markdown and SVG from the same file', () => {
    expect(resultsMarkdown(fixture(), 'latest.svg')).toBe(resultsMarkdown(fixture(), 'latest.svg'));
    expect(distributionsSvg(fixture())).toBe(distributionsSvg(fixture()));
    expect(readmeBlock(fixture(), 'results/x.md', 'results/x.svg')).toBe(readmeBlock(fixture(), 'results/x.md', 'results/x.svg'));
  });

  it('gives each figure its ratio to the best peer, and no ratio where the best is ≤ 0', () => {
    const table = peerTable(fixture().results, isPeer);
    expect(table.split('\n')[0]).toBe('| scenario | conclave redis | conclave zookeeper | zk-recipe | redlock |');
    // graceful p50: redis 5, zookeeper 8, zk-recipe 10 (best peer), redlock 50.
    expect(rowOf(table, 'graceful hand-over p50')).toBe('| graceful hand-over p50 | 5 ms (×0.50) | 8 ms (×0.80) | 10 ms (×1.00) | 50 ms (×5.00) |');
    // redlock's overhead p50 is −10 ms: a ratio to it would mean nothing.
    expect(rowOf(table, 'crash take-over: overhead beyond the lease left p50')).toBe(
      '| crash take-over: overhead beyond the lease left p50 | 10 ms (best peer -10) | 150 ms (best peer -10) | 250 ms (best peer -10) | -10 ms (best) |',
    );
    expect(rowOf(table, 'crash take-over: lease left at the kill p50 (context, no ratio)')).not.toContain('×');
  });

  it('records the run in the markdown and escapes pipes inside table cells', () => {
    const md = resultsMarkdown(fixture(), 'latest.svg');
    expect(md).toContain('- command: `npm run bench -- --quick --peers=zk-recipe,redlock --backend redis,zookeeper`');
    expect(md).toContain('- machine: nproc 2, Test CPU, 8 GiB, node v20.0.0, Linux test');
    expect(md).toContain('- servers: redis 7.0.15, zookeeper 3.8.4');
    expect(md).toContain('- commit: 0123456789ab');
    expect(md).toContain('- skipped etcd3: no etcd binary');
    expect(md).toContain('steady: a \\| pipe in an error');
    expect(md).toContain('![hand-over and take-over per system](latest.svg)');
    // The peers ran in this run: no column of figures from another day.
    expect(md).toContain('| scenario | redis | zookeeper |\n');
    expect(md).not.toContain('reference (');
  });

  it('keeps a note and a command with backticks or line breaks on their lines', () => {
    const f = fixture();
    f.note = 'two\nlines';
    f.argv = ['--note', 'a `tick`'];
    const md = resultsMarkdown(f);
    expect(md).toContain('- note: two lines\n');
    expect(md).toContain("- command: `` npm run bench -- --note 'a `tick`' `` (");
  });

  it('escapes text in the SVG and draws values ≤ 0 in a gutter left of the log axis', () => {
    const svg = distributionsSvg(fixture());
    expect(svg).toContain('fixture &lt;not measured&gt; &amp; &quot;made up&quot;');
    expect(svg).not.toContain('<not measured>');
    expect(svg).toContain('>≤ 0</text>');
    expect(svg.match(/<circle /g)).toHaveLength(4 * (5 + 3 + 3));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(escapeXml(`<a href='x'>&</a>`)).toBe('&lt;a href=&apos;x&apos;&gt;&amp;&lt;/a&gt;');
  });

  it('leaves the chart out of a run without hand-over or take-over samples', () => {
    const f = fixture();
    expect(hasDistributions(f)).toBe(true);
    for (const r of f.results) {
      delete r.graceful;
      delete r.crash;
    }
    expect(hasDistributions(f)).toBe(false);
    expect(resultsMarkdown(f)).not.toContain('![');
  });

  it('spans whole decades on the log axis with 1-2-5 ticks', () => {
    const axis = logAxis([4, 60], 0, 200);
    expect([axis.lo, axis.hi]).toEqual([1, 100]);
    expect(axis.ticks.map((t) => t.label)).toEqual(['1 ms', '2 ms', '5 ms', '10 ms', '20 ms', '50 ms', '100 ms']);
    expect(axis.x(10)).toBe(100);
    expect(formatMs(2915.2)).toBe('2.92 s');
  });

  it('replaces only the text between the markers', () => {
    const doc = 'before\n<!-- bench:table:start -->\nold\n<!-- bench:table:end -->\nafter\n';
    expect(replaceBetweenMarkers(doc, 'bench:table', 'new')).toBe('before\n<!-- bench:table:start -->\nnew\n<!-- bench:table:end -->\nafter\n');
    expect(() => replaceBetweenMarkers('no markers', 'bench:table', 'x')).toThrow(/not found/);
  });
});
