import type { ElectionBackend } from '@conclave/core';
import { ZookeeperBackend, type ZookeeperConnectOptions } from '@conclave/zookeeper';
import { startTcpProxy, type TcpProxy } from '../../../test-harness/src/faults/tcp-proxy';

/**
 * Session timeout the tests ask for, ms. The private servers tick every 200 ms, so this is
 * granted as is; leases are capped at two thirds of it (2 000 ms), above the suites' 1 500 ms.
 */
/** One handle on every route of a backend (a proxy per server): freeze, cut, resume, close. */
export type RoutesProxy = Omit<TcpProxy, 'retarget' | 'targetPort'>;

export const SESSION_TIMEOUT_MS = 3000;
export const REQUEST_TIMEOUT_MS = 3000;

/**
 * Backends for tests, each with its own session, optionally routed through its own TCP proxy so
 * that one of them can be frozen (blackholed) without touching the others. `closeAll()` closes
 * every backend and proxy made here.
 */
export class BackendPool {
  private readonly backends: ZookeeperBackend[] = [];
  private readonly proxies = new Map<ElectionBackend, RoutesProxy>();

  constructor(private readonly connect: () => string) {}

  /** A backend straight to the server. */
  direct(extra: Partial<ZookeeperConnectOptions> = {}): ZookeeperBackend {
    const backend = new ZookeeperBackend({
      connect: this.connect(),
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      ...extra,
    });
    this.backends.push(backend);
    return backend;
  }

  /** A backend whose every connection goes through its own proxy (to the first server listed). */
  async proxied(extra: Partial<ZookeeperConnectOptions> = {}): Promise<{ backend: ZookeeperBackend; proxy: RoutesProxy }> {
    const targets = this.connect().split(',').map((hp) => Number(hp.split(':')[1]));
    const proxies = await Promise.all(targets.map((targetPort) => startTcpProxy({ targetPort })));
    const backend = new ZookeeperBackend({
      connect: proxies.map((p) => p.address).join(','),
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      ...extra,
    });
    this.backends.push(backend);
    // One handle that freezes/cuts/resumes every route of this backend.
    const proxy: RoutesProxy = {
      port: proxies[0]!.port,
      address: proxies[0]!.address,
      blackhole: () => proxies.forEach((p) => p.blackhole()),
      cut: () => proxies.forEach((p) => p.cut()),
      resume: () => proxies.forEach((p) => p.resume()),
      close: async () => {
        await Promise.all(proxies.map((p) => p.close()));
      },
    };
    this.proxies.set(backend, proxy);
    return { backend, proxy };
  }

  /** The proxy of a backend made by `proxied()`. */
  proxyOf(backend: ElectionBackend): RoutesProxy {
    const proxy = this.proxies.get(backend);
    if (!proxy) throw new Error('this backend was not made by proxied()');
    return proxy;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.backends.splice(0).map((b) => b.close()));
    const proxies = [...this.proxies.values()];
    this.proxies.clear();
    await Promise.all(proxies.map((p) => p.close()));
  }
}
