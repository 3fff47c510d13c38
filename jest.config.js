const { isInProgress, workspacePackages } = require('./scripts/workspaces.cjs');

/**
 * Workspace packages still being built (`"conclave": { "inProgress": "…" }` in their package.json)
 * keep their tests out of `npm test` until the mark is removed; CONCLAVE_IN_PROGRESS=1 runs them.
 */
function inProgressPackages() {
  return workspacePackages(__dirname)
    .filter(({ manifest }) => isInProgress(manifest))
    .map(({ dir }) => dir);
}

/**
 * One Jest run over every package. Tests import the workspace packages from their TypeScript
 * sources. ts-jest compiles each file alone (isolatedModules) and checks no types, so `npm test`
 * type-checks first: `tsc --build` for the packages, `tsc -p tsconfig.typecheck.json` for the tests.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test-harness', '<rootDir>/scripts'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  moduleNameMapper: {
    '^@conclave/test-harness$': '<rootDir>/test-harness/src/index.ts',
    '^@conclave/test-harness/tools$': '<rootDir>/test-harness/src/tools.ts',
    '^@conclave/core/internal$': '<rootDir>/packages/core/src/internal.ts',
    // A backend package's kit and launchers (its `testing` entry), and every package's main entry.
    '^@conclave/([a-z0-9-]+)/testing$': '<rootDir>/packages/$1/src/testing/index.ts',
    '^@conclave/([a-z0-9-]+)$': '<rootDir>/packages/$1/src/index.ts',
  },
  testPathIgnorePatterns: ['/node_modules/', ...inProgressPackages().map((dir) => `<rootDir>/${dir}/`)],
  modulePathIgnorePatterns: ['<rootDir>/packages/.*/dist', '<rootDir>/test-harness/dist'],
  testTimeout: 60_000,
  // Five test files at a time on a 2-core machine: most of a file's time is spent waiting for
  // leases, timers and servers, not on the CPU, but the CPU must stay free enough for candidate
  // processes to renew in time. Measured on a 2-core AMD EPYC (per-file times in
  // test-harness/README.md): on a quiet day, four workers left the CPU idle 45 % of the run (588 s)
  // and eight took 335 s with the CPU busy 88 %; on a day the same machine ran the suite 1.7 times
  // slower, eight workers saturated it (load 12–14) and timing tests failed in every run (3–7
  // failures, the previous release's code included), while five ran green in 679 s.
  maxWorkers: 5,
  // The longest files first, by recorded times on a fresh clone: see the sequencer.
  testSequencer: '<rootDir>/test-harness/jest/longest-first-sequencer.js',
  verbose: true,
  reporters: ['default', '<rootDir>/test-harness/jest/summary-reporter.js'],
};
