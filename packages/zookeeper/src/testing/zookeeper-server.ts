import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startTcpProxy, type TcpProxy } from '@conclave/test-harness/tools';
import { JvmServer, baseConfig, resolveOptions } from './zookeeper-jvm';
import type { ZookeeperEnsemble, ZookeeperEnsembleOptions, ZookeeperServer, ZookeeperServerOptions } from './zookeeper-server-types';

/**
 * Starts one standalone ZooKeeper on a free loopback port. Call `close()` in afterAll (it kills
 * the JVM even when a test failed) — and start it once per test file: a JVM takes seconds to start.
 */
export async function startZookeeperServer(options: ZookeeperServerOptions = {}): Promise<ZookeeperServer> {
  const o = resolveOptions(options);
  const dir = mkdtempSync(join(tmpdir(), 'conclave-zk-'));
  const clientPort = await freePort();
  const server = new JvmServer({ dir, clientPort, lines: baseConfig(dir, clientPort, o), options: o });
  try {
    await server.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return withCleanup(server, dir);
}

/**
 * Starts a three-server ensemble on loopback (QuorumPeerMain, one myid and one config per
 * member, distinct client, quorum and election ports). Resolves once every member serves; stop
 * one with `ensemble.servers[i].stop()` and the other two keep a quorum.
 *
 * With `peerProxies`, each member's config names its peers at the addresses of proxies of its
 * own (member i reaches member j through proxies i→j, one for the quorum port, one for the
 * election port), while its own line keeps the ports it listens on, so every connection a
 * member opens to a peer goes through a proxy the test controls.
 */
export async function startZookeeperEnsemble(options: ZookeeperEnsembleOptions = {}): Promise<ZookeeperEnsemble> {
  const o = resolveOptions(options);
  const root = mkdtempSync(join(tmpdir(), 'conclave-zk-ensemble-'));
  const ports: Array<{ client: number; quorum: number; election: number }> = [];
  for (let i = 0; i < 3; i++) {
    ports.push({ client: await freePort(), quorum: await freePort(), election: await freePort() });
  }
  /** links[i][j]: the proxies member i reaches member j through (none for i === j). */
  const links: Array<Array<{ quorum: TcpProxy; election: TcpProxy } | null>> = [];
  const proxies: TcpProxy[] = [];
  const closeProxies = async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  };
  try {
    for (let i = 0; i < 3; i++) {
      const row: Array<{ quorum: TcpProxy; election: TcpProxy } | null> = [];
      for (let j = 0; j < 3; j++) {
        if (i === j || !options.peerProxies) {
          row.push(null);
          continue;
        }
        const quorum = await startTcpProxy({ targetPort: ports[j]!.quorum });
        proxies.push(quorum);
        const election = await startTcpProxy({ targetPort: ports[j]!.election });
        proxies.push(election);
        row.push({ quorum, election });
      }
      links.push(row);
    }
  } catch (err) {
    await closeProxies();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const servers = ports.map((p, i) => {
    const dir = join(root, `server-${i + 1}`);
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'data', 'myid'), `${i + 1}\n`);
    const members = ports.map((q, j) => {
      const via = links[i]![j];
      return via
        ? `server.${j + 1}=127.0.0.1:${via.quorum.port}:${via.election.port}`
        : `server.${j + 1}=127.0.0.1:${q.quorum}:${q.election}`;
    });
    const lines = [
      ...baseConfig(dir, p.client, o),
      // Quorum timing in ticks: generous, because the three JVMs share two slow cores.
      'initLimit=50',
      'syncLimit=25',
      'standaloneEnabled=false',
      'reconfigEnabled=false',
      ...members,
    ];
    return new JvmServer({ dir, clientPort: p.client, lines, options: o });
  });
  const close = async () => {
    await Promise.all(servers.map((s) => s.close()));
    await closeProxies();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    servers.forEach((s) => s.spawn());
    await Promise.all(servers.map((s) => s.waitUntilServing()));
  } catch (err) {
    await close();
    throw err;
  }
  const peerLinksOf = (index: number): TcpProxy[] => {
    if (!options.peerProxies) throw new Error('start the ensemble with { peerProxies: true } to isolate a member');
    if (!Number.isInteger(index) || index < 0 || index >= servers.length) throw new Error(`no member ${index}`);
    return links.flatMap((row, i) =>
      row.flatMap((via, j) => (via && (i === index || j === index) ? [via.quorum, via.election] : [])),
    );
  };
  return {
    servers,
    connect: servers.map((s) => s.connect).join(','),
    isolate(index, how = 'silent') {
      for (const proxy of peerLinksOf(index)) {
        if (how === 'cut') proxy.cut();
        else proxy.blackhole();
      }
    },
    heal() {
      if (!options.peerProxies) return;
      for (const proxy of proxies) proxy.resume();
    },
    close,
  };
}

function withCleanup(server: JvmServer, dir: string): ZookeeperServer {
  const close = server.close.bind(server);
  server.close = async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  return server;
}
