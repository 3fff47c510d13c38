import { ConclaveError, Elector, MemoryBackend, MemoryStore } from '@conclave/core';
import { delay, waitFor } from '@conclave/test-harness';

const LEASE_MS = 600;

function candidate(store: MemoryStore, id: string, leaseMs = LEASE_MS): Elector {
  return new Elector({ backend: new MemoryBackend({ store }), election: 'once', candidateId: id, leaseMs });
}

describe('Elector.runOnce', () => {
  test('elected: runs the task once with the token, holds the lease until holdAtLeastMs after it started, then releases', async () => {
    const store = new MemoryStore();
    // Leases longer than the hold and than a stall of a loaded machine: a process stalled for
    // longer than its lease loses it, and its term ends before the hold (rightly), which is not
    // what this test looks at.
    const a = candidate(store, 'a', 5_000);
    const b = candidate(store, 'b', 5_000);
    let runs = 0;
    let taskStartedAt = 0;
    const outcome = a.runOnce(
      ({ token, signal }) => {
        runs++;
        taskStartedAt = performance.now();
        expect(signal.aborted).toBe(false);
        return `done with ${token}`;
      },
      { holdAtLeastMs: 1500 },
    );
    // b campaigns meanwhile: it must not be elected before the hold ends.
    await delay(100);
    await b.start();
    const electedB = b.waitForLeadership({ timeoutMs: 20_000 }).then(() => performance.now());
    const result = await outcome;
    expect(result).toEqual({ ran: true, result: expect.stringMatching(/^done with \d+$/) });
    expect(runs).toBe(1);
    expect(a.state.role).toBe('stopped');
    const bAt = await electedB;
    expect(bAt - taskStartedAt).toBeGreaterThanOrEqual(1500);
    await b.stop();
  });

  test('three candidates at the same moment with waitMs 0: exactly one runs, the others resolve ran:false before the hold ends', async () => {
    const store = new MemoryStore();
    const electors = ['a', 'b', 'c'].map((id) => candidate(store, id));
    let runs = 0;
    const started = performance.now();
    const settledAt: number[] = [];
    const outcomes = await Promise.all(
      electors.map((e) =>
        e
          .runOnce(() => {
            runs++;
          }, { waitMs: 0, holdAtLeastMs: 3000 })
          .then((r) => {
            settledAt.push(performance.now() - started);
            return r;
          }),
      ),
    );
    expect(runs).toBe(1);
    expect(outcomes.filter((o) => o.ran)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ran)).toEqual([{ ran: false }, { ran: false }]);
    // The losers settle first, long before the winner's 3 s hold ends.
    expect(settledAt.slice(0, 2).every((t) => t < 1500)).toBe(true);
    for (const e of electors) expect(e.state.role).toBe('stopped');
  });

  test('not elected within waitMs: resolves ran:false after about waitMs and stops the Elector', async () => {
    const store = new MemoryStore();
    const holder = candidate(store, 'holder');
    await holder.start();
    const b = candidate(store, 'b');
    let ran = false;
    const started = performance.now();
    const result = await b.runOnce(() => {
      ran = true;
    }, { waitMs: 800 });
    expect(result).toEqual({ ran: false });
    expect(ran).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(790);
    expect(b.state.role).toBe('stopped');
    await holder.stop();
  });

  test('a candidate elected within waitMs after the leader released runs the task', async () => {
    const store = new MemoryStore();
    const holder = candidate(store, 'holder');
    await holder.start();
    const b = candidate(store, 'b');
    const result = b.runOnce(({ token }) => token, { waitMs: 20_000 });
    await delay(200);
    await holder.stop();
    expect(await result).toEqual({ ran: true, result: expect.any(Number) });
  });

  test('a task that throws still holds the lease, then its error is rethrown and the lease released', async () => {
    const store = new MemoryStore();
    const a = candidate(store, 'a');
    const boom = new Error('boom');
    const started = performance.now();
    await expect(a.runOnce(() => Promise.reject(boom), { holdAtLeastMs: 700 })).rejects.toBe(boom);
    expect(performance.now() - started).toBeGreaterThanOrEqual(690);
    expect(a.state.role).toBe('stopped');
    expect(await new MemoryBackend({ store }).getLeader('once')).toBeNull();
  });

  test('an abort while the task runs aborts its signal and skips the hold', async () => {
    const a = candidate(new MemoryStore(), 'a');
    const controller = new AbortController();
    const started = performance.now();
    const result = await a.runOnce(
      ({ signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener('abort', () => resolve('stopped early'), { once: true });
          setTimeout(() => controller.abort(), 100);
        }),
      { holdAtLeastMs: 30_000, signal: controller.signal },
    );
    expect(result).toEqual({ ran: true, result: 'stopped early' });
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test('an abort before the election rejects with ABORTED and stops the Elector', async () => {
    const store = new MemoryStore();
    const holder = candidate(store, 'holder');
    await holder.start();
    const b = candidate(store, 'b');
    const controller = new AbortController();
    const result = b.runOnce(() => undefined, { waitMs: 20_000, signal: controller.signal });
    await delay(100);
    controller.abort();
    await expect(result).rejects.toMatchObject({ code: 'ABORTED' });
    expect(b.state.role).toBe('stopped');
    await holder.stop();
  });

  test.each([
    ['a task that is no function', 'job', {}],
    ['a negative waitMs', () => undefined, { waitMs: -1 }],
    ['a holdAtLeastMs given as a string', () => undefined, { holdAtLeastMs: '30s' }],
    ['a signal that is no AbortSignal', () => undefined, { signal: 'stop' }],
  ])('%s rejects with INVALID_OPTIONS before campaigning', async (_what, task, options) => {
    const store = new MemoryStore();
    const a = candidate(store, 'a');
    const err = await a.runOnce(task as never, options as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConclaveError);
    expect(err).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(a.state.role).toBe('stopped');
    expect(await new MemoryBackend({ store }).getLeader('once')).toBeNull();
  });
});

describe('Elector.runOnce and the hand-over', () => {
  test("stop() during the task releases once the task has settled: the next leader's task starts after it", async () => {
    const store = new MemoryStore();
    const a = candidate(store, 'a', 5_000);
    const b = candidate(store, 'b', 5_000);
    let aSettledAt = 0;
    let bStartedAt = 0;
    let started!: () => void;
    const taskStarted = new Promise<void>((resolve) => (started = resolve));
    const outcome = a.runOnce(async ({ signal }) => {
      started();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await delay(300); // a flush after the abort
      aSettledAt = performance.now();
      return 'flushed';
    });
    await taskStarted;
    b.whileLeader(() => {
      bStartedAt ||= performance.now();
    });
    await b.start();
    try {
      await a.stop();
      expect(aSettledAt).toBeGreaterThan(0);
      expect(await outcome).toEqual({ ran: true, result: 'flushed' });
      await waitFor(() => bStartedAt > 0, "b's task to start");
      expect(bStartedAt).toBeGreaterThanOrEqual(aSettledAt);
    } finally {
      await b.stop();
    }
  });
});

describe('Elector.runOnce with a backend that does not answer', () => {
  test('with waitMs 0, a campaign that failed does not decide: the one answered next does', async () => {
    const backend = new MemoryBackend();
    const campaign = backend.campaign.bind(backend);
    let calls = 0;
    backend.campaign = (request) => (++calls === 1 ? Promise.reject(new ConclaveError('BACKEND_UNAVAILABLE', 'deadlock')) : campaign(request));
    const a = new Elector({ backend, election: 'once-retry', candidateId: 'a', leaseMs: LEASE_MS });
    expect(await a.runOnce(() => 'ran', { waitMs: 0 })).toEqual({ ran: true, result: 'ran' });
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  test('no campaign answered within a lease past waitMs rejects with BACKEND_UNAVAILABLE instead of ran:false', async () => {
    const backend = new MemoryBackend();
    backend.campaign = () => Promise.reject(new ConclaveError('BACKEND_UNAVAILABLE', 'connection refused'));
    const a = new Elector({ backend, election: 'once-down', candidateId: 'a', leaseMs: LEASE_MS });
    let ran = false;
    const err = await a.runOnce(() => {
      ran = true;
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(ran).toBe(false);
    expect(a.state.role).toBe('stopped');
  });
});
