import { ConclaveError, Elector, MemoryBackend, installShutdownHook } from '@conclave/core';
import { HangableBackend, delay, waitFor } from '@conclave/test-harness';

/**
 * The hook reacts to SIGUSR2 here, raised with process.emit (no real signal is sent), and
 * process.exit is replaced by a spy: the test process never exits.
 */
const SIGNAL = 'SIGUSR2';

let exit: jest.SpyInstance;
let remove: (() => void) | undefined;
beforeEach(() => {
  exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
});
afterEach(() => {
  remove?.();
  remove = undefined;
  exit.mockRestore();
});

describe('installShutdownHook', () => {
  test('a second signal exits at once with 130 while the first is still stopping', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    const e = new Elector({ backend, election: 'hook-second', candidateId: 'a', leaseMs: 2000 });
    await e.start();
    backend.hang(); // the release will not return
    remove = installShutdownHook(e, { signals: [SIGNAL], timeoutMs: 60_000 });
    process.emit(SIGNAL);
    await delay(50);
    expect(exit).not.toHaveBeenCalled();
    process.emit(SIGNAL);
    expect(exit).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(130);
    backend.unhang();
    await e.stop();
  });

  test('awaits async cleanup (onStopped) after the Electors stopped, then exits 0', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'hook-cleanup', candidateId: 'a', leaseMs: 600 });
    await e.start();
    const order: string[] = [];
    remove = installShutdownHook(e, {
      signals: [SIGNAL],
      onStopped: async () => {
        order.push(`cleanup starts, elector ${e.state.role}`);
        await delay(300);
        order.push('cleanup done');
      },
    });
    process.emit(SIGNAL);
    await waitFor(() => order.length === 1, 'the cleanup to start');
    expect(exit).not.toHaveBeenCalled();
    await waitFor(() => exit.mock.calls.length > 0, 'the exit');
    expect(order).toEqual(['cleanup starts, elector stopped', 'cleanup done']);
    expect(exit).toHaveBeenCalledWith(0);
  });

  test('stops in order: aborts the whileLeader task, awaits it, releases, then exits', async () => {
    const backend = new MemoryBackend();
    const e = new Elector({ backend, election: 'hook-task', candidateId: 'a', leaseMs: 5_000 });
    const order: string[] = [];
    e.whileLeader(async ({ signal }) => {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      order.push('aborted');
      await delay(300);
      order.push(`task done, lease held: ${(await backend.getLeader('hook-task')) !== null}`);
    });
    await e.start();
    await waitFor(() => e.isLeader(), 'e to lead');
    remove = installShutdownHook(e, {
      signals: [SIGNAL],
      onStopped: async () => {
        order.push(`stopped, lease held: ${(await backend.getLeader('hook-task')) !== null}`);
      },
    });
    process.emit(SIGNAL);
    await waitFor(() => exit.mock.calls.length > 0, 'the exit');
    expect(order).toEqual(['aborted', 'task done, lease held: true', 'stopped, lease held: false']);
    expect(exit).toHaveBeenCalledWith(0);
  });

  test('cleanup that fails exits 1', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'hook-fail', candidateId: 'a', leaseMs: 600 });
    await e.start();
    remove = installShutdownHook(e, { signals: [SIGNAL], onStopped: () => Promise.reject(new Error('flush failed')) });
    process.emit(SIGNAL);
    await waitFor(() => exit.mock.calls.length > 0, 'the exit');
    expect(exit).toHaveBeenCalledWith(1);
  });

  test.each([
    ['no Elector', [], {}],
    ['signals that are no array', undefined, { signals: 'SIGTERM' }],
    ['a timeoutMs of 0', undefined, { timeoutMs: 0 }],
    ['an onStopped that is no function', undefined, { onStopped: 'close' }],
  ])('%s: INVALID_OPTIONS, no handler installed', (_what, electors, options) => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'hook-bad', candidateId: 'a' });
    const before = process.listenerCount(SIGNAL);
    let err: unknown;
    try {
      installShutdownHook((electors ?? e) as never, { signals: [SIGNAL], ...options } as never);
    } catch (caught) {
      err = caught;
    }
    expect(err).toBeInstanceOf(ConclaveError);
    expect(err).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(process.listenerCount(SIGNAL)).toBe(before);
  });
});
