import { request } from 'node:http';
import type { BenchServer } from '@conclave/test-harness/tools';
import { EtcdBackend } from '../etcd-backend';
import { startEtcd } from './etcd-server';

/** etcd's own Raft timings (heartbeat, election timeout), ms: the bench measures a server as deployed. */
const ETCD_DEFAULT_HEARTBEAT_MS = 100;
const ETCD_DEFAULT_ELECTION_MS = 1000;

/**
 * The bench's etcd: a private single member on free ports with etcd's default Raft timings.
 * Its counter is the gRPC messages the server received (`/metrics`, HTTP, so reading it costs no
 * gRPC message), stream messages included: each keep-alive and each watch request counts.
 */
export async function startEtcdBenchServer(leaseMs: number): Promise<BenchServer> {
  const cluster = await startEtcd({ heartbeatMs: ETCD_DEFAULT_HEARTBEAT_MS, electionTimeoutMs: ETCD_DEFAULT_ELECTION_MS });
  const port = cluster.members[0]!.port;
  return {
    port,
    url: (p = port) => `etcd://127.0.0.1:${p}`,
    counterName: 'gRPC messages received (etcd /metrics grpc_server_msg_received_total; includes keep-alives)',
    description: `private etcd (single member, heartbeat ${ETCD_DEFAULT_HEARTBEAT_MS} ms, election timeout ${ETCD_DEFAULT_ELECTION_MS} ms) on 127.0.0.1:${port}, TTL ${EtcdBackend.ttlFor(leaseMs)} s for leaseMs ${leaseMs}`,
    async counters() {
      const text = await httpGet(port, '/metrics');
      let ops = 0;
      for (const m of text.matchAll(/^grpc_server_msg_received_total\{[^}]*\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm)) ops += Number(m[1]);
      return { ops, reads: null };
    },
    async version() {
      return `etcd ${(JSON.parse(await httpGet(port, '/version')) as { etcdserver?: string }).etcdserver ?? 'unknown'}`;
    },
    close: () => cluster.stop(),
  };
}

function httpGet(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error(`etcd ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
