import { randomBytes } from 'node:crypto';
import type { ElectionBackend } from '@conclave/core';
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
  const hang = <T>(call: () => Promise<T>): Promise<T> => (frozen ? new Promise<T>(() => undefined) : call());
  const wrapped: ElectionBackend = {
    kind: backend.kind,
    capabilities: backend.capabilities,
    campaign: (r) => hang(() => backend.campaign(r)),
    renew: (r) => hang(() => backend.renew(r)),
    release: (r) => hang(() => backend.release(r)),
    getLeader: (e) => hang(() => backend.getLeader(e)),
    forceLeader: (e, c, l) => hang(() => backend.forceLeader(e, c, l)),
    clearLeader: (e) => hang(() => backend.clearLeader(e)),
    watch: (e, c, f) => backend.watch!(e, c, () => {
      if (!frozen) f();
    }),
    close: () => backend.close(),
  };
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
