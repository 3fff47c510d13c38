const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Longest file first, so that no long file starts last and keeps the run waiting after the other
 * workers are done (the longest-processing-time rule: with files sorted so, the run ends within
 * one file's time of the ideal).
 *
 * A file's length is what Jest measured in an earlier run in this folder, else what
 * `file-durations.json` beside this file records (a fresh clone, as in CI, has no timings of its
 * own; `node test-harness/jest/record-durations.js <jest --json output>` writes that file). A file
 * in neither, a new one, counts as a harness run (conformance, faults, rolling: a minute or more)
 * or as a short file, by its name.
 */
const RECORDED = loadRecorded();
const HARNESS_RUN = /(^|[\\/])(conformance|faults|rolling)[^\\/]*\.test\.ts$/;
const NEW_HARNESS_RUN_S = 60;
const NEW_FILE_S = 5;

function loadRecorded() {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, 'file-durations.json'), 'utf8')).seconds;
  } catch {
    return {};
  }
}

function expectedSeconds(test) {
  const relative = path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/');
  if (test.duration != null) return test.duration / 1000;
  if (RECORDED[relative] != null) return RECORDED[relative];
  return HARNESS_RUN.test(test.path) ? NEW_HARNESS_RUN_S : NEW_FILE_S;
}

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    // Files that failed last time first, as Jest does; then the longest. The sort is stable, so
    // files of equal length keep Jest's order.
    return super.sort(tests).sort((a, b) => Number(this.hasFailed(b)) - Number(this.hasFailed(a)) || expectedSeconds(b) - expectedSeconds(a));
  }
}

module.exports = LongestFirstSequencer;
