import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isConclaveError } from '@conclave/core';
import { ZookeeperBackend } from '@conclave/zookeeper';

/** Refused and silent servers, without any ZooKeeper: a port nobody listens on, and one that accepts and never answers. */

let refusedPort: number;
let silent: Server;
let silentPort: number;
const sockets = new Set<Socket>();
const backends: ZookeeperBackend[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  // A port that was free a moment ago: nothing listens on it, so connecting is refused.
  const probe = createServer();
  refusedPort = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  silentPort = await listen(silent);
});

afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

function backend(connect: string, extra: { auth?: string; requestTimeoutMs?: number; sessionTimeoutMs?: number } = {}): ZookeeperBackend {
  const b = new ZookeeperBackend({ connect, sessionTimeoutMs: 3000, requestTimeoutMs: 6000, ...extra });
  backends.push(b);
  return b;
}

async function failure(call: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  try {
    await call();
  } catch (err) {
    return { err, ms: performance.now() - started };
  }
  throw new Error('the call succeeded');
}

test('a refused server fails a campaign fast (well under the request timeout) with BACKEND_UNAVAILABLE naming campaign, the server and the refusal, and no password', async () => {
  const b = backend(`127.0.0.1:${refusedPort}/app`, { auth: 'admin:zksecret' });
  const { err, ms } = await failure(() => b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1500 }));
  expect(isConclaveError(err, 'BACKEND_UNAVAILABLE')).toBe(true);
  expect((err as Error).message).toMatch(new RegExp(`^campaign: cannot connect to ZooKeeper at 127\\.0\\.0\\.1:${refusedPort} \\(connection refused\\)`));
  expect((err as Error).message).not.toMatch(/zksecret/);
  expect(ms).toBeLessThan(3000);
});

test('with every server refusing, each later call fails fast too, named after itself (getLeader, listCandidates)', async () => {
  const b = backend(`127.0.0.1:${refusedPort},localhost:${refusedPort}`);
  const first = await failure(() => b.getLeader('e'));
  expect((first.err as Error).message).toMatch(/^getLeader: cannot connect to ZooKeeper at 127\.0\.0\.1:\d+,localhost:\d+ \(connection refused\)/);
  const second = await failure(() => b.candidates!.list('e'));
  expect(isConclaveError(second.err, 'BACKEND_UNAVAILABLE')).toBe(true);
  expect((second.err as Error).message).toMatch(/^listCandidates: cannot connect to ZooKeeper .*\(connection refused\)/);
  expect(first.ms + second.ms).toBeLessThan(3000);
});

test('a server that accepts but does not answer gets the full request timeout, even next to one that refuses, and the error names the call', async () => {
  // A short session timeout gives each connection attempt 300 ms, so the client goes round both
  // servers several times within the request timeout, and is refused on every round.
  const b = backend(`127.0.0.1:${refusedPort},127.0.0.1:${silentPort}`, { requestTimeoutMs: 1500, sessionTimeoutMs: 600 });
  const { err, ms } = await failure(() => b.getLeader('e'));
  expect(isConclaveError(err, 'BACKEND_UNAVAILABLE')).toBe(true);
  expect((err as Error).message).toMatch(/^getLeader: ZooKeeper did not answer within 1500 ms/);
  expect(ms).toBeGreaterThanOrEqual(1400);
});

test('`conclave status` against a refused ZooKeeper exits 1 at once with that message, and no password', async () => {
  const cli = join(__dirname, '..', '..', 'cli', 'dist', 'main.js');
  // "At once" is against the request timeout, made long here: the bound below is half of it, so
  // that a process that starts slowly on a loaded machine is not taken for one that waited.
  const requestTimeoutMs = 30_000;
  const started = performance.now();
  const { code, stderr } = await new Promise<{ code: unknown; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, 'status', '--backend', `zookeeper://admin:zksecret@127.0.0.1:${refusedPort}/app?requestTimeoutMs=${requestTimeoutMs}`, '--election', 'e'],
      { timeout: requestTimeoutMs + 5_000 },
      (err, _stdout, stderr) => resolve({ code: err ? (err as { code?: unknown }).code : 0, stderr }),
    );
  });
  expect(code).toBe(1);
  // status reads the leader, the candidates and whether the election exists at once: the first
  // of them to fail names itself.
  expect(stderr).toMatch(new RegExp(`(?:getLeader|listCandidates|electionExists): cannot connect to ZooKeeper at 127\\.0\\.0\\.1:${refusedPort} \\(connection refused\\)`));
  expect(stderr).not.toMatch(/zksecret/);
  expect(performance.now() - started).toBeLessThan(requestTimeoutMs / 2);
});
