import { performance } from 'node:perf_hooks';
import { CandidateTurns } from '../src/zookeeper-turns';

describe('CandidateTurns', () => {
  test('a call waiting for its turn is dropped, unsent, when its caller gives up; the next still waits its turn', async () => {
    const turns = new CandidateTurns();
    let finishFirst!: () => void;
    const first = turns.serialized('k', performance.now() + 10_000, 'campaign', () => new Promise<string>((r) => (finishFirst = () => r('first'))));
    const controller = new AbortController();
    let sent = false;
    const second = turns.serialized(
      'k',
      performance.now() + 10_000,
      'campaign',
      async () => {
        sent = true;
        return 'second';
      },
      controller.signal,
    );
    const third = turns.serialized('k', performance.now() + 10_000, 'release', async () => 'third');
    controller.abort(new Error('gave up'));
    await expect(second).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(sent).toBe(false);
    let thirdDone = false;
    void third.then(() => (thirdDone = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(thirdDone).toBe(false);
    finishFirst();
    await expect(first).resolves.toBe('first');
    await expect(third).resolves.toBe('third');
  });

  test('a call whose caller already gave up is not sent, even with nothing before it', async () => {
    const turns = new CandidateTurns();
    const controller = new AbortController();
    controller.abort();
    let sent = false;
    await expect(
      turns.serialized('k', performance.now() + 1000, 'campaign', async () => (sent = true), controller.signal),
    ).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(sent).toBe(false);
  });
});
