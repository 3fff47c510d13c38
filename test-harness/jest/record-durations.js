#!/usr/bin/env node
/**
 * Writes `file-durations.json` beside this file from a Jest run's JSON output
 * (`npm test -- --json --outputFile=run.json`): each test file's wall time, in seconds, for the
 * longest-first sequencer of a run that has no timings of its own. Run it again when files are
 * added or their length changes much; a file it does not list is still run.
 *
 *   node test-harness/jest/record-durations.js run.json
 */
const fs = require('node:fs');
const path = require('node:path');

const [, , input] = process.argv;
if (!input) {
  process.stderr.write('usage: node test-harness/jest/record-durations.js <jest --json output>\n');
  process.exit(2);
}
const root = path.resolve(__dirname, '..', '..');
const run = JSON.parse(fs.readFileSync(input, 'utf8'));
const seconds = {};
for (const file of [...run.testResults].sort((a, b) => a.name.localeCompare(b.name))) {
  // The file's path relative to the clone it ran in: the part from its workspace folder on.
  const relative = path.relative(root, file.name).split(path.sep).join('/');
  const key = relative.startsWith('..') ? file.name.replace(/^.*?\/((packages|test-harness|scripts)\/)/, '$1') : relative;
  seconds[key] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
const out = path.join(__dirname, 'file-durations.json');
fs.writeFileSync(out, `${JSON.stringify({ recordedAt: new Date().toISOString().slice(0, 10), seconds }, null, 2)}\n`);
process.stdout.write(`${Object.keys(seconds).length} files written to ${path.relative(process.cwd(), out)}\n`);
