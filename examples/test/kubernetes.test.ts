import { performance } from 'node:perf_hooks';
import { startExample, killAll, uniqueElection, type ExampleProcess } from './example-process';

const BASE_PORT = 19_000 + (process.pid % 1000) * 2;
/**
 * A protocol bound, not a speed: the worker runs the default lease (10 s), renewed every third of
 * it, so at the SIGTERM the leader's lease has at least 10 000 − 3 334 ≈ 6 666 ms left on the
 * server. A take-over within 5 000 ms (1 666 ms of margin) can only come from the release, never
 * from the lease running out.
 */
const HAND_OVER_LIMIT_MS = 5_000;

describe('examples/kubernetes', () => {
  const processes: ExampleProcess[] = [];
  afterAll(() => killAll(processes));

  test('SIGTERM to the leader: it releases and exits 0, and the other replica leads well within a lease', async () => {
    const election = uniqueElection('example-k8s');
    for (const [i, pod] of ['pod-a', 'pod-b'].entries()) {
      processes.push(startExample('kubernetes/worker.mjs', { PORT: String(BASE_PORT + i), POD_NAME: pod, ELECTION: election }));
    }
    await Promise.all(processes.map((p) => p.waitForLine(/^campaigning as/)));
    await Promise.race(processes.map((p) => p.waitForLine(/^leading with token/).catch(() => {})));
    const leaders = processes.filter((p) => p.lines.some((l) => l.startsWith('leading with token')));
    expect(leaders).toHaveLength(1);
    const leader = leaders[0]!;
    const follower = processes.find((p) => p !== leader)!;

    const sentAt = performance.now();
    leader.child.kill('SIGTERM');
    await follower.waitForLine(/^leading with token/, HAND_OVER_LIMIT_MS);
    const handOverMs = performance.now() - sentAt;
    expect(await leader.exited).toBe(0);
    expect(leader.lines).toEqual(expect.arrayContaining([expect.stringMatching(/^stopped leading/), 'released and closed']));
    expect(handOverMs).toBeLessThan(HAND_OVER_LIMIT_MS);
  }, 20_000);
});
