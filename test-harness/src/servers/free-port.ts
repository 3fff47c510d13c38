import { readFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/**
 * Ports handed out here lie below the kernel's ephemeral range, so no outgoing connection can
 * take one between the check and the server's bind (a JVM binds seconds after it is spawned),
 * and each Jest worker has its own block of them, so parallel workers never pick the same port.
 * Within its block a process walks forward, skipping ports something listens on.
 */
export const PORT_BLOCK_SIZE = 400;
const LOWEST_PORT = 10_000;

/** The first port of the kernel's ephemeral range (ports the OS gives outgoing connections). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768; // Linux's default
  }
}

/**
 * The first port of Jest worker `worker`'s block (0 for a process outside Jest), below
 * `ephemeralStart`, or null when the range leaves no room. Blocks of different workers are
 * disjoint while there are fewer workers than blocks (dozens).
 */
export function portBlockStart(worker: number, ephemeralStart: number): number | null {
  const blocks = Math.floor((ephemeralStart - LOWEST_PORT) / PORT_BLOCK_SIZE);
  if (blocks < 1) return null;
  const index = (Number.isInteger(worker) && worker >= 0 ? worker : 0) % blocks;
  return ephemeralStart - (index + 1) * PORT_BLOCK_SIZE;
}

/** This process's block: Jest numbers its workers 1..N; other processes (soak, bench) take 0. */
function ownBlock(): number | null {
  return portBlockStart(Number(process.env.JEST_WORKER_ID ?? 0), ephemeralLow());
}

let blockStart: number | null | undefined;
let cursor = Math.floor(Math.random() * PORT_BLOCK_SIZE);

/** Binds 127.0.0.1:port (0: any) for a moment; resolves to the port, or null when it is taken. */
function tryBind(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(err)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on and that no other port picker in this test run
 * hands out (see above). Falls back to a port the OS picks when the ephemeral range leaves no room.
 */
export async function freePort(): Promise<number> {
  if (blockStart === undefined) blockStart = ownBlock();
  if (blockStart === null) return (await tryBind(0))!;
  for (let tried = 0; tried < PORT_BLOCK_SIZE; tried++) {
    const port = blockStart + (cursor++ % PORT_BLOCK_SIZE);
    if ((await tryBind(port)) !== null) return port;
  }
  throw new Error(`no free port in ${blockStart}-${blockStart + PORT_BLOCK_SIZE - 1}`);
}

/** Resolves once something accepts TCP connections on host:port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1000, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
      socket.connect(port, host);
    });
    if (open) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
