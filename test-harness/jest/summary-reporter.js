/**
 * Prints one plain closing line after Jest's own summary — `jest: N passed, N failed, N skipped` —
 * so CI logs can be read by tools that look for a "N passed, N failed" line.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stderr.write(
      `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}

module.exports = SummaryReporter;
