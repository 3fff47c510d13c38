import { describe, expect, test } from '@jest/globals';
import { Elector, MemoryBackend, MemoryStore } from '@conclave/core';
import { forwardBackend, type ReleaseRequest } from '@conclave/core/spi';
import { waitFor } from '@conclave/test-harness';

/** A memory backend that records every release request it is given. */
function recording(store: MemoryStore, releases: ReleaseRequest[]) {
  return forwardBackend(new MemoryBackend({ store }), {
    release: (next, ...args) => {
      releases.push(args[0] as ReleaseRequest);
      return next(...args);
    },
  });
}

describe('Elector release requests', () => {
  test('a follower releases without a token but bounded by the last token it led with (0 before any); a leader names its term', async () => {
    const store = new MemoryStore();
    const releases: ReleaseRequest[] = [];
    const a = new Elector({ backend: recording(store, releases), election: 'bound', candidateId: 'a', leaseMs: 1000 });
    const b = new Elector({ backend: recording(store, releases), election: 'bound', candidateId: 'b', leaseMs: 1000 });
    await a.start();
    expect(a.isLeader()).toBe(true);
    const firstToken = a.token!;
    await b.start();
    expect(b.isLeader()).toBe(false);

    await b.stop();
    expect(releases.pop()).toMatchObject({ token: null, notAbove: 0 });

    await a.stop();
    const leaderRelease = releases.pop()!;
    expect(leaderRelease).toMatchObject({ token: firstToken });
    expect(leaderRelease.notAbove).toBeUndefined();

    // `a` has led `firstToken`; as a follower of `b` its release is bounded by it.
    await b.start();
    await waitFor(() => b.isLeader(), 'b to lead');
    await a.start();
    expect(a.isLeader()).toBe(false);
    await a.stop();
    expect(releases.pop()).toMatchObject({ token: null, notAbove: firstToken });
    await b.stop();
  });
});
