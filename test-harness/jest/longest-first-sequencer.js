const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest's order, with one change for a run that has no timings yet (a fresh clone, as in CI): the
 * conformance and fault files go first. Jest would otherwise order such files by size, and these
 * are a few lines that call the shared harness but run one to two minutes each; started last, one
 * of them would keep the whole run waiting after the other workers are done.
 */
const HARNESS_RUN = /(^|[\\/])(conformance|faults|rolling)[^\\/]*\.test\.ts$/;

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rank = (test) => (HARNESS_RUN.test(test.path) ? 0 : 1);
    // Array.prototype.sort is stable: within each rank, Jest's order (by size) stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = SlowFirstSequencer;
