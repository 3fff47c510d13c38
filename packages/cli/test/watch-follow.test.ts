import { Elector, MemoryBackend, MemoryStore, type LeaderInfo } from '@conclave/core';
import { ControlledBackend, delay, waitFor } from '@conclave/test-harness';
import { followLeader, watchPacing, PUSH_FALLBACK_MS, type WatchPacing } from '../src/commands/watch';

/** `conclave watch`'s read loop, in-process on the memory backend (its push is in-process). */

function follow(backend: ControlledBackend, election: string, pacing: WatchPacing) {
  const seen: Array<LeaderInfo | null> = [];
  const outages: Array<unknown | null> = [];
  const stop = new AbortController();
  const done = followLeader({
    backend,
    election,
    pacing,
    signal: stop.signal,
    onLeader: (leader) => seen.push(leader),
    onOutage: (err) => outages.push(err),
  });
  const reads = () => backend.calls.filter((c) => c.method === 'getLeader').length;
  return { seen, outages, reads, stop: () => (stop.abort(), done) };
}

test('pacing: push backends are read on hints (plus a slow fallback when hints can be lost), others every --interval-ms', () => {
  const memory = new MemoryBackend();
  expect(watchPacing(memory, 60_000)).toEqual({ push: true, idleMs: 60_000, retryMs: PUSH_FALLBACK_MS });
  expect(watchPacing(memory)).toEqual({ push: true, idleMs: PUSH_FALLBACK_MS, retryMs: 500 });
  const reliable = Object.assign(Object.create(memory) as MemoryBackend, { leaderChanges: { ...memory.leaderChanges, delivery: 'reliable' } });
  expect(watchPacing(reliable, 200)).toEqual({ push: true, idleMs: null, retryMs: 200 });
  const none = Object.assign(Object.create(memory) as MemoryBackend, { leaderChanges: undefined });
  expect(watchPacing(none, 200)).toEqual({ push: false, idleMs: 200, retryMs: 200 });
});

test('with push and no timer, each new term and release is reported, and nothing is read between changes', async () => {
  const store = new MemoryStore();
  const observer = new ControlledBackend(new MemoryBackend({ store }));
  const election = 'watch-follow-push';
  const watch = follow(observer, election, { push: true, idleMs: null, retryMs: 50 });
  await waitFor(() => watch.seen.length === 1, 'the first read');
  expect(watch.seen[0]).toBeNull();

  const a = new Elector({ backend: new MemoryBackend({ store }), election, candidateId: 'a', leaseMs: 1000 });
  await a.start();
  await waitFor(() => watch.seen.length === 2, 'the new term', 2_000);
  expect(watch.seen[1]).toMatchObject({ candidateId: 'a', token: a.token });
  // Renewals change nothing an observer sees: no hint, no read.
  const reads = watch.reads();
  await delay(700);
  expect(watch.reads()).toBe(reads);

  await a.stop();
  await waitFor(() => watch.seen.length === 3, 'the release', 2_000);
  expect(watch.seen[2]).toBeNull();
  await watch.stop();
  expect(watch.outages).toEqual([]);
  await observer.close();
});

test('an outage is reported once when reads start failing and once when they succeed again', async () => {
  const observer = new ControlledBackend(new MemoryBackend());
  const watch = follow(observer, 'watch-follow-outage', { push: false, idleMs: 20, retryMs: 20 });
  await waitFor(() => watch.seen.length === 1, 'the first read');
  observer.failCalls();
  const failedFrom = watch.reads();
  await waitFor(() => watch.reads() >= failedFrom + 5, 'five failed reads');
  expect(watch.outages).toHaveLength(1);
  expect(watch.outages[0]).toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
  observer.failCalls(false);
  await waitFor(() => watch.outages.length === 2, 'the end of the outage');
  const recovered = watch.reads();
  await waitFor(() => watch.reads() >= recovered + 5, 'five more reads');
  expect(watch.outages).toEqual([watch.outages[0], null]);
  expect(watch.seen).toEqual([null]);
  await watch.stop();
  await observer.close();
});
