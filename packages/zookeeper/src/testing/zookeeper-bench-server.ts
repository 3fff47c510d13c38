import type { BenchServer } from '@conclave/test-harness/tools';
import { fourLetterWord } from './zookeeper-jvm';
import { startZookeeperServer } from './zookeeper-server';

const ZOOKEEPER_TICK_MS = 100;
/** A heap sized for the many-elections scenario's 30 000 nodes and their watches, as a deployment would size it. */
const ZOOKEEPER_HEAP_MB = 512;

/** The bench's ZooKeeper: a private standalone server (tick 100 ms) on a free port. */
export async function startZookeeperBenchServer(leaseMs: number): Promise<BenchServer> {
  // The tick the package README advises for 2–3 s leases: sessions expire on tick boundaries,
  // so the tick is what a take-over may add to the lease.
  const server = await startZookeeperServer({ tickTimeMs: ZOOKEEPER_TICK_MS, heapMb: ZOOKEEPER_HEAP_MB });
  const port = server.port;
  return {
    port,
    // No session option: the backend asks for a session as long as the lease, the ZooKeeper
    // "lease" (a crashed leader's node goes when its session expires).
    url: (p = port) => `zookeeper://127.0.0.1:${p}`,
    counterName: 'packets received (mntr zk_packets_received; includes session pings)',
    description: `private ZooKeeper (standalone, tickTime ${ZOOKEEPER_TICK_MS} ms, heap ${ZOOKEEPER_HEAP_MB} MiB) on 127.0.0.1:${port}, no session option (session timeout = leaseMs ${leaseMs})`,
    async counters() {
      const mntr = await fourLetterWord(port, 'mntr', 5000);
      const ops = Number(/zk_packets_received\s+(\d+)/.exec(mntr)?.[1] ?? NaN);
      return { ops, reads: null };
    },
    async version() {
      // `srvr` starts with "Zookeeper version: 3.x.y-…, built on …".
      const srvr = await fourLetterWord(port, 'srvr', 5000);
      // Some distribution builds leave an unexpanded `-${mvngit.commit.id}` after the number.
      const v = /version:\s*([^,\s]+)/i.exec(srvr)?.[1]?.replace(/-\$\{[^}]*\}$/, '');
      return `zookeeper ${v ?? 'unknown'}`;
    },
    close: () => server.close(),
  };
}
