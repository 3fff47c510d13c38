import * as core from '../src';
import * as spi from '../src/spi';

// The main entry is the API a service calls, so a name joins it on purpose, not because a
// backend needed a helper: those go to `@conclave/core/spi`.
test('the main entry exports only what a service calls', () => {
  expect(Object.keys(core).sort()).toEqual([
    'CONCLAVE_ERROR_CODES',
    'ConclaveError',
    'DEFAULT_LEASE_MS',
    'Elector',
    'FORCED_EXIT_CODE',
    'MAX_TIMER_MS',
    'MemoryBackend',
    'MemoryStore',
    'consoleLogger',
    'createBackend',
    'defaultCandidateId',
    'fromBunyan',
    'fromWinston',
    'installShutdownHook',
    'isConclaveError',
    'memoryProvider',
    'redactUrl',
    'runOnce',
    'silentLogger',
  ]);
});

test('the SPI entry adds to the main entry and repeats none of its values', () => {
  const mainNames = new Set(Object.keys(core));
  expect(Object.keys(spi).filter((name) => mainNames.has(name))).toEqual([]);
  expect(Object.keys(spi)).toEqual(expect.arrayContaining(['operationOf', 'forwardBackend', 'TickBatcher', 'withTimeout']));
});
