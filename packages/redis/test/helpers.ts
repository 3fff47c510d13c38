import { randomBytes } from 'node:crypto';
import { forwardBackend, type BackendMethod, type ElectionBackend } from '@conclave/core/spi';
import Redis from 'ioredis';
import { RedisBackend, type RedisBackendOptions } from '@conclave/redis';

/** The shared server of this machine; tests use a random key prefix and never flush it. */
export const SHARED_URL = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniquePrefix(): string {
  return `conclave-test-${randomBytes(4).toString('hex')}:`;
}

export function uniqueName(what = 'e'): string {
  return `${what}-${randomBytes(4).toString('hex')}`;
}

/** Backends made by a test, closed in afterEach. */
export class BackendPool {
  private readonly all: ElectionBackend[] = [];

  redis(options: RedisBackendOptions): RedisBackend {
    const backend = new RedisBackend(options);
    this.all.push(backend);
    return backend;
  }

  add<T extends ElectionBackend>(backend: T): T {
    this.all.push(backend);
    return backend;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((b) => b.close()));
  }
}

/**
 * Wraps a backend so that, after `freeze()`, every call hangs: the process looks frozen to the
 * server (no renewals), as a stopped-the-world pause would make it.
 */
export function freezable(backend: ElectionBackend): { backend: ElectionBackend; freeze: () => void } {
  let frozen = false;
  // The whole contract is forwarded, so the wrapper has every part the backend has.
  const hung: ReadonlySet<BackendMethod> = new Set(['campaign', 'renew', 'release', 'getLeader', 'forceLeader', 'clearLeader']);
  const wrapped = forwardBackend(backend, {
    all: (method, _args, invoke) => (frozen && hung.has(method) ? new Promise<never>(() => undefined) : invoke()),
    watch: (next, e, c, f) =>
      next(e, c, (hint) => {
        if (!frozen) f(hint);
      }),
  });
  return { backend: wrapped, freeze: () => void (frozen = true) };
}

/** Polls `predicate` every 20 ms until it holds, or fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits until every server has been up for longer than `leaseMs`: a freshly started master is
 * inside its restart fence (it grants no new term for a lease after it starts; see
 * redis-scripts.ts), which tests that are not about the fence wait out once, up front.
 */
export async function pastRestartFence(urls: readonly string[], leaseMs: number): Promise<void> {
  const clients = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }));
  try {
    for (const client of clients) {
      for (;;) {
        const info = await client.info('server');
        const up = Number(/uptime_in_seconds:(\d+)/.exec(info)?.[1] ?? 0);
        // uptime is whole seconds, rounded down: one more second makes it a lower bound.
        const left = leaseMs - up * 1000 + 1000;
        if (left <= 0) break;
        await new Promise((r) => setTimeout(r, Math.min(left, 500)));
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
  }
}
