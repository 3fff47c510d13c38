import { waitFor } from '@conclave/test-harness';
import { assertBuilt, killAll, startConclave, uniqueElection } from './cli-process';

/** A change must show within this of the moment the campaign printed it, ms. */
const PROMPT_MS = 4_000;
/** Far longer than the test: with it, only a push can explain a prompt line. */
const HUGE_INTERVAL = ['--interval-ms', '60000'];

/**
 * `conclave watch` on a backend that declares `leaderPush`: the leader is read again on each hint,
 * so changes show at once even with a polling interval far longer than the test.
 */
export function describeCliWatchPush(name: string, url: () => string): void {
  describe(`conclave watch on ${name}`, () => {
    beforeAll(assertBuilt);
    afterEach(killAll);

    test(`with --interval-ms 60000, a new leader and its release are printed within ${PROMPT_MS} ms (push)`, async () => {
      const election = uniqueElection('watch-push');
      const watch = startConclave(['watch', '--json', ...HUGE_INTERVAL, '--backend', url(), '--election', election]);
      await watch.waitForEvent({ event: 'leader', leaderId: null });

      const a = startConclave(['campaign', '--json', '--backend', url(), '--election', election, '--id', 'cand-a', '--lease-ms', '1500']);
      const elected = await a.waitForEvent({ event: 'elected' });
      const seen = await watch.waitForEvent({ event: 'leader', leaderId: 'cand-a', token: elected.token }, 2 * PROMPT_MS);
      expect(seen.at - elected.at).toBeLessThan(PROMPT_MS);

      a.signal('SIGTERM');
      expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
      const stopped = a.events().at(-1)!;
      // The first line said "no leader" too: the release is the second.
      const released = await waitFor(() => watch.events().filter((e) => e.leaderId === null)[1], 'watch to print the release', 2 * PROMPT_MS);
      expect(released.at - stopped.at).toBeLessThan(PROMPT_MS);

      watch.signal('SIGINT');
      expect(await watch.waitForExit()).toEqual({ code: 0, signal: null });
      expect(watch.stderr).toBe('');
    });
  });
}
