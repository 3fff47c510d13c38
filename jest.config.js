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
 * builds first (`tsc --build`), and scripts/test/typecheck.test.ts checks the tests' types.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test-harness', '<rootDir>/scripts', '<rootDir>/examples'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  moduleNameMapper: {
    '^@conclave/test-harness$': '<rootDir>/test-harness/src/index.ts',
    '^@conclave/test-harness/tools$': '<rootDir>/test-harness/src/tools.ts',
    '^@conclave/core/spi$': '<rootDir>/packages/core/src/spi.ts',
    // A backend package's kit and launchers (its `testing` entry), and every package's main entry.
    '^@conclave/([a-z0-9-]+)/testing$': '<rootDir>/packages/$1/src/testing/index.ts',
    '^@conclave/([a-z0-9-]+)$': '<rootDir>/packages/$1/src/index.ts',
  },
  testPathIgnorePatterns: ['/node_modules/', ...inProgressPackages().map((dir) => `<rootDir>/${dir}/`)],
  modulePathIgnorePatterns: ['<rootDir>/packages/.*/dist', '<rootDir>/test-harness/dist'],
  testTimeout: 60_000,
  // Eight test files at a time on a 2-core machine: most of a file's time is spent waiting for
  // leases, timers and servers, not on the CPU. Measured on a 2-core AMD EPYC, fresh clones
  // (test-harness/README.md): five files at a time left the CPU idle 42 % of the run (499 s), seven
  // 22 % (382 s); eight ran green in 403 s while three other builds and test runs loaded the
  // machine (load average 15). Ten saturate both cores, and a process starved of the CPU for a
  // second misses a renewal of a 1.5 s lease.
  maxWorkers: 8,
  // The longest files first, by recorded times on a fresh clone: see the sequencer.
  testSequencer: '<rootDir>/test-harness/jest/longest-first-sequencer.js',
  verbose: true,
  reporters: ['default', '<rootDir>/test-harness/jest/summary-reporter.js'],
};
