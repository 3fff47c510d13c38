import { ConclaveError, Elector, MemoryBackend, MemoryStore, type Logger } from '@conclave/core';
import { HangableBackend, waitFor } from '@conclave/test-harness';

/** A logger that keeps what it was told, to check that logs name the election. */
function recordingLogger() {
  const lines: Array<{ level: string; context: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (context: object, message: string) =>
    lines.push({ level, context: context as Record<string, unknown>, message });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

/** A memory backend whose calls can be made to fail, as a server that refuses connections. */
class RefusingBackend extends MemoryBackend {
  refusing = false;
  private check() {
    if (this.refusing) throw new ConclaveError('BACKEND_UNAVAILABLE', 'connection refused', { backend: 'memory' });
  }
  override async campaign(...args: Parameters<MemoryBackend['campaign']>) {
    this.check();
    return super.campaign(...args);
  }
  override async renew(...args: Parameters<MemoryBackend['renew']>) {
    this.check();
    return super.renew(...args);
  }
  override async release(...args: Parameters<MemoryBackend['release']>) {
    this.check();
    return super.release(...args);
  }
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => process.off('unhandledRejection', onUnhandled));
afterEach(() => expect(unhandled).toEqual([]));

describe('Elector', () => {
  test('fills documented defaults from leaseMs', () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'defaults', leaseMs: 9000 });
    expect(e.options).toMatchObject({ leaseMs: 9000, renewMs: 3000, retryMs: 1800, safetyMarginMs: 180 });
    expect(e.candidateId).toMatch(/^[^:]+:\d+:[0-9a-f]{6}$/);
    const d = new Elector({ backend: new MemoryBackend(), election: 'defaults' });
    expect(d.options).toMatchObject({ leaseMs: 10_000, renewMs: 3333, retryMs: 2000, safetyMarginMs: 200 });
    const small = new Elector({ backend: new MemoryBackend(), election: 'defaults', leaseMs: 300 });
    expect(small.options.safetyMarginMs).toBe(50);
  });

  test('start() resolves as a follower when the backend refuses, logs with the election, and recovers', async () => {
    const backend = new RefusingBackend();
    backend.refusing = true;
    const { logger, lines } = recordingLogger();
    const e = new Elector({ backend, election: 'refused', candidateId: 'a', leaseMs: 1000, logger });
    await e.start();
    expect(e.state.role).toBe('follower');
    expect(e.isLeader()).toBe(false);
    const warning = lines.find((l) => l.level === 'warn');
    expect(warning?.context).toMatchObject({ election: 'refused', candidate: 'a', backend: 'memory' });
    backend.refusing = false;
    await waitFor(() => e.isLeader(), 'leadership once the backend answers', 20_000);
    expect(lines.some((l) => l.message === 'backend reachable again')).toBe(true);
    await e.stop();
  });

  test('start() resolves and stop() returns even when the backend never answers', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    backend.hang();
    const e = new Elector({ backend, election: 'hung', candidateId: 'a', leaseMs: 500 });
    await e.start();
    expect(e.isLeader()).toBe(false);
    const before = performance.now();
    await e.stop();
    expect(performance.now() - before).toBeLessThan(5000);
    expect(e.state.role).toBe('stopped');
  });

  test('a leader whose renewals fail steps down at its deadline with lease-expired', async () => {
    const backend = new RefusingBackend();
    const e = new Elector({ backend, election: 'failing-renew', candidateId: 'a', leaseMs: 600 });
    await e.start();
    expect(e.isLeader()).toBe(true);
    const token = e.token;
    backend.refusing = true;
    const failedAt = performance.now();
    await waitFor(() => e.state.reason === 'lease-expired', 'the revocation');
    expect(e.isLeader()).toBe(false);
    // Never past the lease counted from the last renewal sent before the failures.
    expect(performance.now() - failedAt).toBeLessThan(600 + 1000);
    backend.refusing = false;
    await waitFor(() => e.isLeader(), 'leadership again', 10_000);
    expect(e.token!).toBeGreaterThan(token!);
    await e.stop();
  });

  test('health() is ok while things work and fails when the backend has been gone for a lease', async () => {
    const backend = new RefusingBackend();
    const e = new Elector({ backend, election: 'health', candidateId: 'a', leaseMs: 400 });
    expect(e.health()).toMatchObject({ ok: true, role: 'stopped', leaseRemainingMs: null });
    await e.start();
    expect(e.health()).toMatchObject({ ok: true, role: 'leader', consecutiveFailures: 0 });
    expect(e.health().leaseRemainingMs).toBeGreaterThan(0);
    backend.refusing = true;
    // Once the term has ended (a loaded machine may first report the leader past its deadline).
    await waitFor(() => !e.health().ok && e.state.role === 'follower', 'health to fail', 10_000);
    expect(e.health().problem).toMatch(/unreachable/);
    backend.refusing = false;
    await waitFor(() => e.health().ok && e.isLeader(), 'health to recover', 10_000);
    await e.stop();
  });

  test('a task that throws is logged, not rethrown', async () => {
    const { logger, lines } = recordingLogger();
    const e = new Elector({ backend: new MemoryBackend(), election: 'task-throws', candidateId: 'a', leaseMs: 600, logger });
    e.whileLeader(() => {
      throw new Error('boom');
    });
    await e.start();
    await waitFor(() => lines.some((l) => l.message === 'whileLeader task failed'), 'the task error to be logged');
    await e.stop();
  });

  test('candidates sharing a store but not a backend see each other; separate stores do not', async () => {
    const store = new MemoryStore();
    const a = new Elector({ backend: new MemoryBackend({ store }), election: 'shared', candidateId: 'a', leaseMs: 600 });
    const b = new Elector({ backend: new MemoryBackend({ store }), election: 'shared', candidateId: 'b', leaseMs: 600 });
    const c = new Elector({ backend: new MemoryBackend(), election: 'shared', candidateId: 'c', leaseMs: 600 });
    await a.start();
    await b.start();
    await c.start();
    expect([a.isLeader(), b.isLeader(), c.isLeader()]).toEqual([true, false, true]);
    expect(b.state.leaderId).toBe('a');
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });
});

describe('Elector.stop()', () => {
  test('a leader goes from leader straight to stopped, never through follower', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'stop-order', candidateId: 'a', leaseMs: 600 });
    await e.start();
    expect(e.isLeader()).toBe(true);
    const states: string[] = [];
    const revoked: string[] = [];
    e.state$.subscribe((s) => states.push(`${s.role}${s.reason ? `/${s.reason}` : ''}`));
    e.revoked$.subscribe((r) => revoked.push(r.reason));
    await e.stop();
    expect(states).toEqual(['leader', 'stopped']);
    expect(revoked).toEqual(['stopped']);
  });

  test('the role is stopped as soon as stop() is called, before the release returns', async () => {
    const backend = new HangableBackend(new MemoryBackend());
    const e = new Elector({ backend, election: 'stop-at-once', candidateId: 'a', leaseMs: 500 });
    await e.start();
    backend.hang();
    const stopped = e.stop();
    expect(e.state.role).toBe('stopped');
    await stopped;
    expect(e.state.role).toBe('stopped');
  });
});

describe('calls the Elector gives up on', () => {
  /** A memory backend whose campaigns hang, unanswered, while `hanging`; it keeps every request. */
  class HangingCampaigns extends MemoryBackend {
    hanging = true;
    readonly requests: Array<Parameters<MemoryBackend['campaign']>[0] | Parameters<MemoryBackend['release']>[0]> = [];
    override async campaign(...args: Parameters<MemoryBackend['campaign']>) {
      this.requests.push(args[0]);
      if (this.hanging) return new Promise<never>(() => undefined);
      return super.campaign(...args);
    }
    override async release(...args: Parameters<MemoryBackend['release']>) {
      this.requests.push(args[0]);
      return super.release(...args);
    }
  }

  test('each call carries its deadline, and its signal aborts when the Elector gives up on it', async () => {
    const backend = new HangingCampaigns();
    const e = new Elector({ backend, election: 'gives-up', candidateId: 'a', leaseMs: 400, logger: null });
    const started = e.start();
    await waitFor(() => backend.requests.length > 0, 'the first campaign');
    const sentAt = performance.now();
    const first = backend.requests[0]!;
    expect(first.signal).toBeInstanceOf(AbortSignal);
    expect(first.signal!.aborted).toBe(false);
    // The campaign timeout is leaseMs - safetyMarginMs.
    expect(first.deadlineMs).toBeLessThanOrEqual(sentAt + 400 - 50);
    expect(first.deadlineMs).toBeGreaterThan(sentAt + 400 - 50 - 100);
    await started;
    expect(first.signal!.aborted).toBe(true);
    expect(performance.now()).toBeGreaterThanOrEqual(first.deadlineMs! - 1);
    expect(first.signal!.reason).toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    backend.hanging = false;
    await waitFor(() => e.isLeader(), 'leadership once campaigns are answered', 5000);
    const answered = backend.requests.at(-1)!;
    expect(answered.signal!.aborted).toBe(false);
    await e.stop();
    const release = backend.requests.at(-1)!;
    expect(release).toMatchObject({ candidateId: e.instanceId, token: e.state.token ?? expect.any(Number) });
    expect(release.signal!.aborted).toBe(false);
    expect(typeof release.deadlineMs).toBe('number');
  });

  test('calls that end before the Elector gives up share one signal; a call given up on keeps its aborted signal, and the next calls get a fresh one', async () => {
    /** Renewals recorded; they hang, unanswered, while `hanging`. */
    class HangingRenewals extends MemoryBackend {
      hanging = false;
      readonly signals: AbortSignal[] = [];
      /** Renewals sent with a signal aborted already. */
      sentAborted = 0;
      override async renew(...args: Parameters<MemoryBackend['renew']>) {
        this.signals.push(args[0].signal!);
        if (args[0].signal!.aborted) this.sentAborted++;
        if (this.hanging) return new Promise<never>(() => undefined);
        return super.renew(...args);
      }
    }
    const backend = new HangingRenewals();
    const e = new Elector({ backend, election: 'shared-signal', candidateId: 'a', leaseMs: 600, logger: null });
    await e.start();
    try {
      await waitFor(() => backend.signals.length >= 3, 'three renewals', 5000);
      const shared = backend.signals[0]!;
      backend.hanging = true;
      await waitFor(() => shared.aborted, 'the hung renewal given up on', 5000);
      backend.hanging = false;
      // Renewals sent while they hung are given up on too; then the Elector leads and renews again.
      const settled = () => {
        const last = backend.signals.slice(-3);
        return e.isLeader() && last.length === 3 && last.every((s) => s === last[0] && !s.aborted);
      };
      await waitFor(settled, 'renewing again, on one signal', 10_000);
      const signals = backend.signals;
      // A signal goes on to the next call unless that call was given up on (campaigns and
      // releases here answer at once, so only a hung renewal is); an aborted one goes on to none.
      const reusedUnlessGivenUp = signals.slice(1).every((s, i) => signals[i]!.aborted || s === signals[i]);
      expect({ reusedUnlessGivenUp, sentAborted: backend.sentAborted, givenUp: new Set(signals.filter((s) => s.aborted)).size > 0 }).toEqual({
        reusedUnlessGivenUp: true,
        sentAborted: 0,
        givenUp: true,
      });
    } finally {
      await e.stop();
    }
  });
});

describe('health()', () => {
  test('leaseRemainingMs is a whole number of ms', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'health-int', candidateId: 'a', leaseMs: 600 });
    await e.start();
    for (let i = 0; i < 20; i++) {
      const left = e.health().leaseRemainingMs;
      expect(left).not.toBeNull();
      expect(Number.isInteger(left)).toBe(true);
      await new Promise((r) => setTimeout(r, 3));
    }
    await e.stop();
  });
});
