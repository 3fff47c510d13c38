/**
 * Writing a run's files: `<base>.json` (every figure and sample), and from it alone `<base>.md`
 * (the tables) and `<base>.svg` (the chart, when the run has samples for it), side by side in one directory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distributionsSvg, hasDistributions } from './chart-svg';
import { resultsMarkdown } from './results-markdown';
import type { ResultsFile } from './results-types';
import { rows } from './verdicts';

/** The markdown and the chart next to an existing results JSON. Returns the paths written. */
export function writeReport(f: ResultsFile, dir: string, base: string): string[] {
  const md = join(dir, `${base}.md`);
  if (!hasDistributions(f)) {
    writeFileSync(md, resultsMarkdown(f));
    return [md];
  }
  const svg = join(dir, `${base}.svg`);
  writeFileSync(svg, distributionsSvg(f));
  writeFileSync(md, resultsMarkdown(f, `${base}.svg`));
  return [md, svg];
}

/** A new run: the JSON (with each system's rows as judged at run time), then its report. */
export function writeResults(f: ResultsFile, dir: string, base: string): string[] {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${base}.json`);
  const withRows = { ...f, results: f.results.map((r) => ({ ...r, rows: rows(r, f.leaseMs) })) };
  writeFileSync(json, `${JSON.stringify(withRows, null, 2)}\n`);
  return [json, ...writeReport(f, dir, base)];
}
