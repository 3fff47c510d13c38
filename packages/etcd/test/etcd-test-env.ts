import { afterAll, beforeAll } from '@jest/globals';
import { get } from 'node:http';
import type { ElectionBackend } from '@conclave/core';
import { EtcdBackend } from '@conclave/etcd';
import { startEtcd, type EtcdCluster, type StartEtcdOptions } from '@conclave/etcd/testing';
import { startTcpProxy, type TcpProxy } from '@conclave/test-harness/tools';
import { waitFor } from '@conclave/test-harness';

export interface PrivateEtcd {
  readonly cluster: EtcdCluster;
  readonly url: string;
  readonly hosts: string[];
  /** A backend whose traffic goes through a proxy of its own (to member 0), so it can be cut alone. */
  proxied(): Promise<EtcdBackend>;
  proxyOf(backend: ElectionBackend): TcpProxy;
}

/** A private etcd for this test file: started in beforeAll, stopped (data removed) in afterAll. */
export function privateEtcd(options: StartEtcdOptions = {}): PrivateEtcd {
  let cluster: EtcdCluster | null = null;
  const proxies = new Map<ElectionBackend, TcpProxy>();
  beforeAll(async () => {
    cluster = await startEtcd(options);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([...proxies.values()].map((p) => p.close()));
    await cluster?.stop();
  });
  const env: PrivateEtcd = {
    get cluster() {
      if (!cluster) throw new Error('etcd not started');
      return cluster;
    },
    get url() {
      return env.cluster.url;
    },
    get hosts() {
      return env.cluster.members.map((m) => `127.0.0.1:${m.port}`);
    },
    async proxied() {
      const proxy = await startTcpProxy({ targetPort: env.cluster.members[0]!.port });
      const backend = new EtcdBackend({ hosts: [proxy.address], requestTimeoutMs: 2_000 });
      proxies.set(backend, proxy);
      return backend;
    },
    proxyOf(backend) {
      const proxy = proxies.get(backend);
      if (!proxy) throw new Error('not a proxied backend');
      return proxy;
    },
  };
  return env;
}

/** The member's Prometheus metrics (`/metrics`, over HTTP: reading them sends no gRPC request). */
function metricsOf(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/** The sum of the samples of metric `name` on the member at `port` whose labels match `labels`. */
export async function metricSum(port: number, name: string, labels = /.*/): Promise<number> {
  let n = 0;
  let found = false;
  for (const m of (await metricsOf(port)).matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    found = true;
    if (labels.test(m[1] ?? '')) n += Number(m[2]);
  }
  if (!found) throw new Error(`no ${name} in /metrics`);
  return n;
}

/** KV requests (Txn and Range) the member at `port` received: one per round trip. */
export function kvRequests(port: number): Promise<number> {
  return metricSum(port, 'grpc_server_started_total', /grpc_method="(?:Txn|Range)"/);
}

/**
 * The Raft leader's index once most members agree on one: a member that rejoins its peers may
 * start an election, and a cluster just started may still hold its first one.
 */
export async function raftLeaderOf(cluster: EtcdCluster, timeoutMs = 30_000): Promise<number> {
  // Wrapped: index 0 is a leader too.
  const found = await waitFor(async () => {
    const index = await cluster.leaderIndex();
    return index === null ? null : { index };
  }, 'a Raft leader', timeoutMs, 100);
  return found.index;
}

/** What a test file opens (backends, clients, proxies): closed after its tests, the newest first. */
export function closedAfterAll(): Array<{ close(): Promise<void> | void }> {
  const opened: Array<{ close(): Promise<void> | void }> = [];
  afterAll(async () => {
    for (const o of opened.reverse()) await o.close();
  });
  return opened;
}

export { waitFor as eventually, delay as sleep } from '@conclave/test-harness';
