import { stat } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { StepTimer } from '../src/step-timer';

/** A timer whose steps are counted. */
function countingRunner(): { runner: StepTimer; steps: () => number } {
  let steps = 0;
  const runner = new StepTimer(() => steps++);
  return { runner, steps: () => steps };
}

/**
 * Runs `arm` inside an I/O callback, then reports how many steps ran by the loop's next check
 * phase. From an I/O callback the order is fixed: immediates run before the next timers phase,
 * so a step armed as an immediate has run and one armed as a 0 ms timer (at least 1 ms) has not.
 */
function stepsByNextTurn(arm: (runner: StepTimer) => void): Promise<number> {
  const { runner, steps } = countingRunner();
  return new Promise((resolve) => {
    stat(__filename, () => {
      arm(runner);
      setImmediate(() => {
        const n = steps();
        runner.cancel();
        resolve(n);
      });
    });
  });
}

describe('StepTimer', () => {
  test('a step due now runs on the next turn of the loop, not after a timer tick', async () => {
    expect(await stepsByNextTurn((runner) => runner.schedule(0))).toBe(1);
    expect(await stepsByNextTurn((runner) => runner.arm({ delayMs: 0 }))).toBe(1);
  });

  test('a step due now is cancelled by cancel() and replaced by a later schedule()', async () => {
    expect(await stepsByNextTurn((runner) => (runner.schedule(0), runner.cancel()))).toBe(0);
    expect(await stepsByNextTurn((runner) => (runner.schedule(0), runner.schedule(60_000)))).toBe(0);
  });

  test('a step with a delay waits for its timer', async () => {
    expect(await stepsByNextTurn((runner) => runner.schedule(5))).toBe(0);
  });
});
