import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from '@jest/globals';
import { ConclaveError, Elector, MemoryBackend, type ConclaveErrorCode, type Logger } from '@conclave/core';
import { forwardBackend } from '@conclave/core/spi';
import { waitFor } from '@conclave/test-harness';

/** A logger that keeps what it was told. */
function recordingLogger() {
  const lines: Array<{ level: string; context: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (context: object, message: string) =>
    lines.push({ level, context: context as Record<string, unknown>, message });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

/**
 * A memory backend whose calls fail with `failing` while it is set (as a server that refuses a
 * password, or cannot be reached), and whose campaigns are counted; `hold` keeps campaigns
 * unanswered until it resolves.
 */
function failingBackend() {
  const control = { failing: null as ConclaveError | null, campaigns: 0, hold: null as Promise<void> | null };
  const fail = async () => {
    if (control.hold) await control.hold;
    if (control.failing) throw control.failing;
  };
  const backend = forwardBackend(new MemoryBackend(), {
    campaign: async (next, ...args) => {
      control.campaigns++;
      await fail();
      return next(...args);
    },
    renew: async (next, ...args) => {
      await fail();
      return next(...args);
    },
    release: async (next, ...args) => {
      await fail();
      return next(...args);
    },
  });
  return { backend, control };
}

const refusal = (code: ConclaveErrorCode) => new ConclaveError(code, `refused (${code})`, { backend: 'memory' });

describe('Elector.start() with a configuration that can never work', () => {
  test.each(['BACKEND_AUTH', 'BACKEND_MISCONFIGURED'] as const)(
    'a first campaign failing with %s rejects start() within 2 s, stops the Elector (nothing campaigns after) and logs it once with the election',
    async (code) => {
      const { backend, control } = failingBackend();
      control.failing = refusal(code);
      const { logger, lines } = recordingLogger();
      const e = new Elector({ backend, election: `refused-${code}`, candidateId: 'a', leaseMs: 500, logger });
      const startedAt = performance.now();
      await expect(e.start()).rejects.toMatchObject({ code });
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      expect(e.state.role).toBe('stopped');
      expect(e.health()).toMatchObject({ ok: true, role: 'stopped' });
      const campaigns = control.campaigns;
      // Retries would come every retryMs (100 ms here): none may.
      await sleep(500);
      expect(control.campaigns).toBe(campaigns);
      // The rejection is the loud part (whoever called start() reports it); the log says it once,
      // at info, naming the election, and warns of nothing.
      expect(lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
      const said = lines.filter((l) => l.context.err === control.failing);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ level: 'info', context: { election: `refused-${code}`, err: control.failing } });
      await backend.close();
    },
  );

  test('a later start() tries again, and leads once the configuration is fixed', async () => {
    const { backend, control } = failingBackend();
    control.failing = refusal('BACKEND_AUTH');
    const e = new Elector({ backend, election: 'fixed-later', candidateId: 'a', leaseMs: 500, logger: null });
    await expect(e.start()).rejects.toMatchObject({ code: 'BACKEND_AUTH' });
    control.failing = null;
    await e.start();
    expect(e.isLeader()).toBe(true);
    await e.stop();
    await backend.close();
  });

  test('a transient first failure still resolves start() as a follower, which keeps campaigning and leads once the backend answers', async () => {
    const { backend, control } = failingBackend();
    control.failing = new ConclaveError('BACKEND_UNAVAILABLE', 'connection refused', { backend: 'memory' });
    const e = new Elector({ backend, election: 'transient', candidateId: 'a', leaseMs: 500, logger: null });
    await e.start();
    expect(e.state.role).toBe('follower');
    // A permanent error after that first outcome is retried too: start() has resolved already.
    control.failing = refusal('BACKEND_AUTH');
    const campaigns = control.campaigns;
    await waitFor(() => control.campaigns > campaigns + 1, 'campaigns to go on', 5_000);
    expect(e.state.role).toBe('follower');
    control.failing = null;
    await waitFor(() => e.isLeader(), 'leadership once the backend answers', 5_000);
    await e.stop();
    await backend.close();
  });

  test('a permanent error after the backend has answered keeps the Elector campaigning, logged at error level, reported by health() and, after a lease, as a lost backend', async () => {
    const { backend, control } = failingBackend();
    const { logger, lines } = recordingLogger();
    const e = new Elector({ backend, election: 'rotated', candidateId: 'a', leaseMs: 500, logger });
    await e.start();
    expect(e.isLeader()).toBe(true);
    // The password was rotated under the running Elector.
    control.failing = refusal('BACKEND_AUTH');
    await waitFor(() => e.state.role === 'follower', 'the term to end', 5_000);
    const campaigns = control.campaigns;
    await waitFor(() => control.campaigns > campaigns + 1, 'campaigns to go on', 5_000);
    expect(e.state.role).toBe('follower');
    expect(e.health()).toMatchObject({ ok: false, problem: expect.stringContaining('refused (BACKEND_AUTH)') });
    expect(lines.some((l) => l.level === 'error' && l.context.election === 'rotated' && l.context.err === control.failing)).toBe(true);
    // What the default unreachable warning on stderr follows, when no logger is given.
    await waitFor(() => e.backendState === 'lost', 'the backend to count as lost', 5_000);
    control.failing = null;
    await waitFor(() => e.isLeader() && e.health().ok, 'leadership and health again', 5_000);
    await e.stop();
    await backend.close();
  });
});

describe('Elector.health() before the backend first answers', () => {
  test('is not ok while no call has been answered since start(), and ok once one is', async () => {
    const { backend, control } = failingBackend();
    let answer!: () => void;
    control.hold = new Promise<void>((resolve) => (answer = resolve));
    const e = new Elector({ backend, election: 'unanswered', candidateId: 'a', leaseMs: 500, logger: null });
    const started = e.start();
    await waitFor(() => control.campaigns > 0, 'the first campaign', 2_000);
    expect(e.health()).toMatchObject({ ok: false, role: 'follower', problem: expect.stringMatching(/not answered since start\(\)/) });
    answer();
    control.hold = null;
    await started;
    expect(e.health()).toMatchObject({ ok: true, role: 'leader' });
    await e.stop();
    await backend.close();
  });

  test('is not ok after a transient first failure, naming the failed calls, before a lease has passed', async () => {
    const { backend, control } = failingBackend();
    control.failing = new ConclaveError('BACKEND_UNAVAILABLE', 'connection refused', { backend: 'memory' });
    const e = new Elector({ backend, election: 'unanswered-failed', candidateId: 'a', leaseMs: 10_000, logger: null });
    await e.start();
    expect(e.health()).toMatchObject({ ok: false, role: 'follower', problem: 'the backend has not answered since start(); 1 failed call; last error: connection refused (backend memory)' });
    await e.stop();
    await backend.close();
  });
});
