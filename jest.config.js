/**
 * One Jest run over every package. Tests import the workspace packages from their TypeScript
 * sources (type-checking is `tsc --build`'s job, which `npm test` runs first).
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test-harness'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  moduleNameMapper: {
    '^@conclave/test-harness$': '<rootDir>/test-harness/src/index.ts',
    '^@conclave/(core|mysql|redis|zookeeper|migrate|cli)$': '<rootDir>/packages/$1/src/index.ts',
  },
  modulePathIgnorePatterns: ['<rootDir>/packages/.*/dist', '<rootDir>/test-harness/dist'],
  testTimeout: 60_000,
  maxWorkers: 2,
  verbose: true,
  reporters: ['default', '<rootDir>/test-harness/jest/summary-reporter.js'],
};
