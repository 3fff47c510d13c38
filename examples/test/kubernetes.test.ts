import { performance } from 'node:perf_hooks';
import { startExample, killAll, uniqueElection, type ExampleProcess } from './example-process';

const BASE_PORT = 19_000 + (process.pid % 1000) * 2;
/** The worker's lease is the default (10 s): a take-over much sooner proves a release, not an expiry. */
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
