import { getEventListeners } from 'node:events';
import { BehaviorSubject } from 'rxjs';
import { ConclaveError, Elector, MemoryBackend, MemoryStore, type ConclaveErrorCode } from '@conclave/core';
import { waitForLeadership } from '../src/wait-for-leadership';

/** A stand-in for an Elector whose state the test sets by hand. */
function fakeSource() {
  const state = { term: null as { token: number } | null, stopped: false };
  const changes = new BehaviorSubject<void>(undefined);
  return {
    state,
    changes,
    source: { election: 'fake', current: () => state.term, stopped: () => state.stopped, changes },
    /** Changes the state and tells the waiter, as the Elector's state$ would. */
    set(next: Partial<typeof state>) {
      Object.assign(state, next);
      changes.next();
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<ConclaveErrorCode | 'resolved'> {
  try {
    await promise;
    return 'resolved';
  } catch (err) {
    if (err instanceof ConclaveError) return err.code;
    throw err;
  }
}

describe('waitForLeadership cleans up on every path', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const expectClean = (f: ReturnType<typeof fakeSource>, signal: AbortSignal) => {
    expect(f.changes.observed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  };

  test('elected: resolves with the term and leaves no timer, listener or subscription', async () => {
    const f = fakeSource();
    const controller = new AbortController();
    const wait = waitForLeadership(f.source, { timeoutMs: 10_000, signal: controller.signal });
    expect(f.changes.observed).toBe(true);
    f.set({ term: { token: 7 } });
    await expect(wait).resolves.toEqual({ token: 7 });
    expectClean(f, controller.signal);
  });

  test('timeout: rejects with TIMEOUT after timeoutMs and leaves nothing behind', async () => {
    const f = fakeSource();
    const controller = new AbortController();
    const wait = codeOf(waitForLeadership(f.source, { timeoutMs: 5000, signal: controller.signal }));
    jest.advanceTimersByTime(4999);
    f.set({});
    jest.advanceTimersByTime(1);
    expect(await wait).toBe('TIMEOUT');
    expectClean(f, controller.signal);
  });

  test('abort: rejects with ABORTED carrying the reason and leaves nothing behind', async () => {
    const f = fakeSource();
    const controller = new AbortController();
    const wait = waitForLeadership(f.source, { timeoutMs: 5000, signal: controller.signal });
    const reason = new Error('shutting down');
    controller.abort(reason);
    const err = await wait.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConclaveError);
    expect(err).toMatchObject({ code: 'ABORTED', cause: reason });
    expectClean(f, controller.signal);
  });

  test('stopped meanwhile: rejects with STOPPED and leaves nothing behind', async () => {
    const f = fakeSource();
    const controller = new AbortController();
    const wait = codeOf(waitForLeadership(f.source, { timeoutMs: 5000, signal: controller.signal }));
    f.set({ stopped: true });
    expect(await wait).toBe('STOPPED');
    expectClean(f, controller.signal);
  });

  test('already leading, already stopped, already aborted, timeoutMs 0: settles at once without subscribing', async () => {
    const leading = fakeSource();
    leading.state.term = { token: 3 };
    const signal = new AbortController().signal;
    await expect(waitForLeadership(leading.source, { timeoutMs: 0, signal })).resolves.toEqual({ token: 3 });
    const stopped = fakeSource();
    stopped.state.stopped = true;
    expect(await codeOf(waitForLeadership(stopped.source, { signal }))).toBe('STOPPED');
    expect(await codeOf(waitForLeadership(leading.source, { signal: AbortSignal.abort() }))).toBe('ABORTED');
    const follower = fakeSource();
    expect(await codeOf(waitForLeadership(follower.source, { timeoutMs: 0, signal }))).toBe('TIMEOUT');
    for (const f of [leading, stopped, follower]) expectClean(f, signal);
  });
});

describe('Elector.waitForLeadership', () => {
  const elector = (store: MemoryStore, id: string) =>
    new Elector({ backend: new MemoryBackend({ store }), election: 'wait', candidateId: id, leaseMs: 600 });

  test('resolves at once with the current token and a live term signal when already leading', async () => {
    const a = elector(new MemoryStore(), 'a');
    await a.start();
    const lease = await a.waitForLeadership({ timeoutMs: 0 });
    expect(lease.token).toBe(a.token);
    expect(lease.signal.aborted).toBe(false);
    await a.stop();
    expect(lease.signal.aborted).toBe(true);
  });

  test('a follower resolves when it is elected, with the new term token', async () => {
    const store = new MemoryStore();
    const a = elector(store, 'a');
    const b = elector(store, 'b');
    await a.start();
    await b.start();
    const first = a.token!;
    const waiting = b.waitForLeadership({ timeoutMs: 20_000 });
    await a.stop();
    const lease = await waiting;
    expect(lease.token).toBeGreaterThan(first);
    expect(b.isLeader()).toBe(true);
    await b.stop();
  });

  test('a follower that is not elected in time rejects with TIMEOUT', async () => {
    const store = new MemoryStore();
    const a = elector(store, 'a');
    const b = elector(store, 'b');
    await a.start();
    await b.start();
    const started = performance.now();
    expect(await codeOf(b.waitForLeadership({ timeoutMs: 300 }))).toBe('TIMEOUT');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    await Promise.all([a.stop(), b.stop()]);
  });

  test('an Elector that was never started rejects with STOPPED; one stopped meanwhile too', async () => {
    const store = new MemoryStore();
    const a = elector(store, 'a');
    expect(await codeOf(a.waitForLeadership())).toBe('STOPPED');
    const b = elector(store, 'b');
    await a.start();
    await b.start();
    const waiting = codeOf(b.waitForLeadership());
    void b.stop();
    expect(await waiting).toBe('STOPPED');
    await a.stop();
  });

  test('an abort rejects with ABORTED', async () => {
    const store = new MemoryStore();
    const a = elector(store, 'a');
    const b = elector(store, 'b');
    await a.start();
    await b.start();
    const controller = new AbortController();
    const waiting = codeOf(b.waitForLeadership({ signal: controller.signal }));
    controller.abort();
    expect(await waiting).toBe('ABORTED');
    await Promise.all([a.stop(), b.stop()]);
  });

  test.each([
    ['options that are no object', 'soon'],
    ['a negative timeoutMs', { timeoutMs: -1 }],
    ['a fractional timeoutMs', { timeoutMs: 1.5 }],
    ['a timeoutMs given as a string', { timeoutMs: '100' }],
    ['a timeoutMs longer than a timer can wait', { timeoutMs: 2 ** 31 }],
    ['a signal that is no AbortSignal', { signal: { aborted: false } }],
  ])('%s rejects with INVALID_OPTIONS before anything else', async (_what, options) => {
    const a = elector(new MemoryStore(), 'a');
    await a.start();
    const waiting = a.waitForLeadership(options as never);
    expect(await codeOf(waiting)).toBe('INVALID_OPTIONS');
    await a.stop();
  });
});
