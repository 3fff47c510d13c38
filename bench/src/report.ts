/**
 * `npm run bench:report [-- RESULTS.json] [--no-readme]`
 *
 * Regenerates, from a results JSON alone (default bench/results/latest.json), the markdown next
 * to it (`<base>.md`), its chart (`<base>.svg`), and the block between the `bench:table` markers
 * in bench/README.md and, where it has them, the root README, so that no figure is ever copied
 * by hand. Runs nothing else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { replaceBetweenMarkers } from './markers';
import { writeReport } from './report-files';
import { readmeBlock } from './results-markdown';
import type { ResultsFile } from './results-types';

const BENCH_DIR = join(__dirname, '..');
const README = join(BENCH_DIR, 'README.md');
const READMES = [README, join(BENCH_DIR, '..', 'README.md')];
const MARKER = '<!-- bench:table:start -->';

function main(argv: string[]): void {
  const files = argv.filter((a) => !a.startsWith('--'));
  const unknown = argv.filter((a) => a.startsWith('--') && a !== '--no-readme');
  if (unknown.length || files.length > 1) {
    console.error('usage: npm run bench:report [-- RESULTS.json] [--no-readme]');
    process.exit(2);
  }
  // npm runs scripts from the package root; a relative path was typed where npm was started.
  const jsonPath = files[0] ? resolve(process.env.INIT_CWD ?? process.cwd(), files[0]) : join(BENCH_DIR, 'results', 'latest.json');
  if (!jsonPath.endsWith('.json')) throw new Error(`${jsonPath}: a results .json file is expected`);
  const results = JSON.parse(readFileSync(jsonPath, 'utf8')) as ResultsFile;
  const dir = dirname(jsonPath);
  const base = basename(jsonPath, '.json');
  const written = writeReport(results, dir, base);
  if (!argv.includes('--no-readme')) {
    const chart = written.find((p) => p.endsWith('.svg'));
    for (const readme of READMES) {
      const doc = readFileSync(readme, 'utf8');
      // The root README's block is optional; the bench's own must be there.
      if (readme !== README && !doc.includes(MARKER)) continue;
      const link = (p: string) => relative(dirname(readme), p).split(sep).join('/');
      const block = readmeBlock(results, link(join(dir, `${base}.md`)), chart && link(chart));
      writeFileSync(readme, replaceBetweenMarkers(doc, 'bench:table', block));
      written.push(readme);
    }
  }
  console.log(`written: ${written.map((p) => relative(process.cwd(), p)).join(', ')}`);
}

main(process.argv.slice(2));
