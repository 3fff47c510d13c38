import { createServer, connect, type Server, type Socket } from 'node:net';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { freePort } from '@conclave/test-harness/tools';

/**
 * The peer traffic of a private etcd cluster, through one proxy per member that knows which
 * member opened each connection, so that one member can be cut from its peers (both ways) while
 * its clients still reach it.
 *
 * etcd keeps one peer URL per member for the whole cluster (member ids are derived from them), so
 * unlike ZooKeeper a member cannot be given proxies of its own to each peer. Instead every
 * member's advertised peer URL is its proxy, and the proxy tells the connecting member apart by
 * the process that owns the connection's other end (Linux: `/proc/net/tcp` and `/proc/<pid>/fd`).
 * etcd's peer traffic (Raft streams and pipelines, probes, lease renewals a follower forwards to
 * the leader) all goes over connections to peer URLs, so isolating member i stops every
 * connection to i's proxy and every connection i opened to another's.
 */
export interface EtcdPeerLinks {
  /** Port member `index`'s peers reach it at (its advertised peer URL). */
  advertisedPort(index: number): number;
  /** The process of member `index` now (null while it is down): how connections are told apart. */
  setPid(index: number, pid: number | null): void;
  /** Member `index` cut from its peers: `silent` (bytes dropped, sockets open) or `cut` (reset and refused). */
  isolate(index: number, how?: 'silent' | 'cut'): void;
  /** Ends every isolation; connections that were silenced are reset (their streams lost bytes). */
  heal(): void;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket | null;
  /** Member that opened it, or null when unknown (then only its destination decides). */
  src: number | null;
  dst: number;
  /** Bytes are being dropped. */
  silent: boolean;
}

export async function startEtcdPeerLinks(peerPorts: readonly number[]): Promise<EtcdPeerLinks> {
  const pids: Array<number | null> = peerPorts.map(() => null);
  const isolated = new Map<number, 'silent' | 'cut'>();
  const links = new Set<Link>();
  const servers: Server[] = [];
  const advertised: number[] = [];

  const blockedBy = (link: Link): 'silent' | 'cut' | null => isolated.get(link.dst) ?? (link.src === null ? null : (isolated.get(link.src) ?? null));

  const destroy = (link: Link) => {
    links.delete(link);
    link.client.destroy();
    link.upstream?.destroy();
  };

  const forward = (link: Link) => {
    const upstream = connect({ host: '127.0.0.1', port: peerPorts[link.dst]! });
    link.upstream = upstream;
    upstream.setNoDelay(true);
    link.client.on('data', (b) => {
      if (!link.silent) upstream.write(b);
    });
    upstream.on('data', (b) => {
      if (!link.silent) link.client.write(b);
    });
    const end = () => destroy(link);
    upstream.on('close', end);
    upstream.on('error', end);
    link.client.resume();
  };

  const admit = (link: Link) => {
    const block = blockedBy(link);
    if (block === 'cut') return destroy(link);
    if (block === 'silent') {
      // Held: accepted, nothing read or passed on until heal() resets it.
      link.silent = true;
      link.client.resume();
      return;
    }
    forward(link);
  };

  for (let dst = 0; dst < peerPorts.length; dst++) {
    const port = await freePort();
    const server = createServer({ pauseOnConnect: true }, (client) => {
      client.setNoDelay(true);
      const link: Link = { client, upstream: null, src: null, dst, silent: false };
      links.add(link);
      const end = () => destroy(link);
      client.on('close', end);
      client.on('error', end);
      void ownerOf(client.remotePort ?? 0, port, pids).then(
        (src) => {
          link.src = src;
          if (links.has(link)) admit(link);
        },
        () => {
          if (links.has(link)) admit(link);
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    servers.push(server);
    advertised.push(port);
  }

  return {
    advertisedPort: (i) => advertised[i]!,
    setPid(i, pid) {
      pids[i] = pid;
    },
    isolate(index, how = 'silent') {
      isolated.set(index, how);
      for (const link of [...links]) {
        const block = blockedBy(link);
        if (block === 'cut') destroy(link);
        else if (block === 'silent') link.silent = true;
      }
    },
    heal() {
      isolated.clear();
      for (const link of [...links]) if (link.silent) destroy(link);
    },
    async close() {
      for (const link of [...links]) destroy(link);
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/**
 * The member whose process owns the client end of a connection from 127.0.0.1:`clientPort` to
 * 127.0.0.1:`serverPort`, or null.
 */
async function ownerOf(clientPort: number, serverPort: number, pids: ReadonlyArray<number | null>): Promise<number | null> {
  const hex = (p: number) => p.toString(16).toUpperCase().padStart(4, '0');
  const local = `0100007F:${hex(clientPort)}`;
  const remote = `0100007F:${hex(serverPort)}`;
  const table = await readFile('/proc/net/tcp', 'utf8');
  let inode: string | null = null;
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[1] === local && f[2] === remote) {
      inode = f[9] ?? null;
      break;
    }
  }
  if (inode === null || inode === '0') return null;
  const wanted = `socket:[${inode}]`;
  for (let i = 0; i < pids.length; i++) {
    const pid = pids[i];
    if (pid === null || pid === undefined) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if ((await readlink(`/proc/${pid}/fd/${fd}`)) === wanted) return i;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}
