import { Elector, MemoryBackend, silentLogger, type BackendState } from '@conclave/core';
import { HangableBackend, waitFor } from '@conclave/test-harness';

let stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops) await stop();
  stops = [];
});

function elector(backend: HangableBackend, leaseMs: number) {
  const e = new Elector({ backend, election: 'state-demo', candidateId: 'a', leaseMs, logger: silentLogger });
  const seen: BackendState[] = [];
  const sub = e.backendState$.subscribe((s) => seen.push(s));
  stops.push(async () => {
    await e.stop();
    sub.unsubscribe();
  });
  return { e, seen };
}

describe('backendState$', () => {
  test('is connected after the first answer, suspended on a failure, reconnected when answered again', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    const { e, seen } = elector(backend, 2000);
    expect(e.backendState).toBeNull();
    await e.start();
    expect(seen).toEqual(['connected']);
    // A leader whose renewals fail keeps its lease until the deadline: suspended, not lost.
    backend.failCalls();
    await waitFor(() => seen.length === 2, 'a failed renewal');
    expect(seen).toEqual(['connected', 'suspended']);
    expect(e.isLeader()).toBe(true);
    backend.failCalls(false);
    await waitFor(() => seen.length === 3, 'an answered renewal');
    expect(seen).toEqual(['connected', 'suspended', 'reconnected']);
    expect(e.backendState).toBe('reconnected');
  });

  test('is lost when no call is answered for longer than a lease, and the first answer then is connected', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    backend.failCalls();
    const { e, seen } = elector(backend, 200);
    await e.start();
    expect(e.isLeader()).toBe(false);
    await waitFor(() => seen.includes('lost'), 'lost');
    expect(seen).toEqual(['suspended', 'lost']);
    backend.failCalls(false);
    // The first answer is what counts: once it leads on a 200 ms lease, a stall of this process
    // can end its term (lost, then reconnected) before the next look.
    await waitFor(() => seen.length >= 3, 'an answer');
    expect(seen.slice(0, 3)).toEqual(['suspended', 'lost', 'connected']);
  });

  test('is lost when a leader gives up its term because renewals hang', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    const { e, seen } = elector(backend, 300);
    await e.start();
    expect(e.isLeader()).toBe(true);
    const stateAtRevoke: Array<BackendState | null> = [];
    const sub = e.revoked$.subscribe(() => stateAtRevoke.push(e.backendState));
    backend.hang();
    await waitFor(() => stateAtRevoke.length > 0, 'revoked');
    sub.unsubscribe();
    expect(stateAtRevoke).toEqual(['lost']);
    // The hung renewal may time out (suspended) just before the deadline ends the term.
    expect(seen.filter((s) => s !== 'suspended')).toEqual(['connected', 'lost']);
    backend.unhang();
  });

  test('is forgotten on stop and connected afresh after a restart', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    const { e, seen } = elector(backend, 2000);
    await e.start();
    await e.stop();
    expect(e.backendState).toBeNull();
    await e.start();
    expect(seen).toEqual(['connected', 'connected']);
  });
});
