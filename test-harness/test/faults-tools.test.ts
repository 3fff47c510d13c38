import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, test } from '@jest/globals';
import {
  GUARD_MYSQL_URL,
  GUARD_REDIS_URL,
  Prng,
  checkGuardWrites,
  checkRecovery,
  checkSplitBrain,
  dropGuard,
  openGuard,
  prepareGuard,
  readGuard,
  startFaultProxy,
  startTcpProxy,
  type GuardConfig,
  type GuardWrite,
} from '@conclave/test-harness';

// The tools of the fault runs, checked on their own: the guarded resource (on the shared
// servers), the fault proxy's latency/blackhole/cut, the PRNG and the checker's extensions.

const run = randomBytes(3).toString('hex');
const guards: GuardConfig[] = [
  { kind: 'redis', url: GUARD_REDIS_URL, key: `conclave-guard-test:${run}` },
  { kind: 'mysql', url: GUARD_MYSQL_URL, table: 'conclave_guard', name: `guard-test-${run}` },
];

afterAll(async () => {
  await Promise.all(guards.map((g) => dropGuard(g).catch(() => undefined)));
});

describe.each(guards)('guarded resource ($kind)', (guard) => {
  test('accepts a token ≥ the highest accepted, rejects a lower one, and orders accepted writes', async () => {
    await prepareGuard(guard);
    const client = openGuard(guard);
    try {
      expect(await client.write(5, 'a')).toEqual({ accepted: true, seq: 1 });
      expect(await client.write(5, 'a')).toEqual({ accepted: true, seq: 2 });
      expect(await client.write(4, 'b')).toEqual({ accepted: false, seq: null });
      expect(await client.write(7, 'b')).toEqual({ accepted: true, seq: 3 });
      expect(await client.write(5, 'a')).toEqual({ accepted: false, seq: null });
      const state = await readGuard(guard);
      expect(state).toMatchObject({ token: 7, holder: 'b', seq: 3 });
    } finally {
      await client.close();
    }
  });
});

describe('checkGuardWrites', () => {
  const w = (candidateId: string, token: number, seq: number | null, accepted = seq !== null): GuardWrite => ({
    candidateId,
    atMs: seq ?? 0,
    doneAtMs: seq ?? 0,
    token,
    accepted,
    seq,
  });
  test('counts a lower token accepted after a higher one, and one token accepted from two candidates', () => {
    const clean = checkGuardWrites([w('a', 1, 1), w('a', 1, 2), w('b', 2, 3), w('a', 1, null)]);
    expect(clean).toMatchObject({ accepted: 3, rejected: 1, failed: 0, staleWrites: [], sharedTokens: [] });
    const bad = checkGuardWrites([w('a', 1, 1), w('b', 2, 2), w('a', 1, 3), w('c', 2, 4)]);
    expect(bad.staleWrites.map((x) => x.seq)).toEqual([3]);
    expect(bad.sharedTokens.map(([x, y]) => [x.candidateId, y.candidateId])).toEqual([['b', 'c']]);
  });
});

describe('split-brain checker with lease ends', () => {
  test('a frozen leader’s term ends when its lease ran out, not when it reported it', () => {
    const history = [
      { atMs: 0, candidateId: 'a', kind: 'elected' as const, token: 1 },
      { atMs: 100, candidateId: 'a', kind: 'work' as const, token: 1 },
      // frozen at 200; lease ran out at 1500; b elected at 1700; a wakes at 3000
      { atMs: 1700, candidateId: 'b', kind: 'elected' as const, token: 2 },
      { atMs: 3000, candidateId: 'a', kind: 'revoked' as const, token: 1, leaseEndMs: 1500 },
    ];
    expect(checkSplitBrain(history).overlaps).toEqual([]);
    // Without the lease end the same history is an overlap; with work after b's election, stale work.
    expect(checkSplitBrain(history.map((e) => ({ ...e, leaseEndMs: undefined }))).overlaps).toHaveLength(1);
    const stale = checkSplitBrain([...history, { atMs: 3001, candidateId: 'a', kind: 'work', token: 1 }]);
    expect(stale.staleWork).toHaveLength(1);
    expect(stale.workOutsideTerm).toHaveLength(1);
  });

  test('recovery: time from each heal until some candidate leads', () => {
    const intervals = [
      { candidateId: 'a', process: 'a', token: 1, startMs: 0, endMs: 1000 },
      { candidateId: 'b', process: 'b', token: 2, startMs: 2500, endMs: Infinity },
    ];
    const r = checkRecovery(intervals, [
      { atMs: 500, label: 'x', boundMs: 100 },
      { atMs: 1200, label: 'y', boundMs: 1000 },
    ], 5000);
    expect(r.recoveries.map((x) => x.recoveredAfterMs)).toEqual([0, 1300]);
    expect(r.late.map((x) => x.label)).toEqual(['y']);
  });
});

describe('Prng', () => {
  test('a seed gives the same sequence', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const seqA = Array.from({ length: 20 }, () => a.int(0, 1000));
    expect(Array.from({ length: 20 }, () => b.int(0, 1000))).toEqual(seqA);
    expect(new Set(seqA).size).toBeGreaterThan(10);
  });
});

describe('fault proxy', () => {
  let echo: Server;
  const sockets: Socket[] = [];
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await new Promise<void>((r) => (echo ? echo.close(() => r()) : r()));
  });

  test('adds latency both ways, blackholes, cuts and heals', async () => {
    echo = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      s.pipe(s);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const port = (echo.address() as { port: number }).port;
    const proxy = await startFaultProxy({ targetPort: port });
    try {
      const client = connect(proxy.port, '127.0.0.1');
      sockets.push(client);
      client.on('error', () => undefined);
      await new Promise<void>((r) => client.once('connect', () => r()));
      const roundTrip = async (timeoutMs = 3000): Promise<number | null> => {
        const started = performance.now();
        return new Promise((resolve) => {
          const timer = setTimeout(() => {
            client.off('data', onData);
            resolve(null);
          }, timeoutMs);
          const onData = () => {
            clearTimeout(timer);
            client.off('data', onData);
            resolve(performance.now() - started);
          };
          client.on('data', onData);
          client.write('x');
        });
      };
      expect(await roundTrip()).toBeLessThan(100);
      proxy.delay(150);
      expect(await roundTrip()).toBeGreaterThanOrEqual(290); // 150 ms each way
      proxy.delay(0);
      proxy.blackhole();
      expect(await roundTrip(400)).toBeNull();
      proxy.resume(); // the held byte arrives
      await new Promise((r) => setTimeout(r, 100));
      expect(await roundTrip()).toBeLessThan(200);
      const closed = new Promise<void>((r) => client.once('close', () => r()));
      proxy.cut();
      await closed;
    } finally {
      await proxy.close();
    }
  });
});

describe('tcp proxy', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await Promise.all(servers.map((server) => new Promise<void>((r) => server.close(() => r()))));
  });

  /** A server that greets every connection with its name and keeps it open. */
  const namedServer = async (name: string): Promise<number> => {
    const server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      s.write(name);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return (server.address() as { port: number }).port;
  };
  const greeting = (port: number): Promise<string> =>
    new Promise((resolve) => {
      const client = connect(port, '127.0.0.1');
      sockets.push(client);
      client.on('error', () => undefined);
      client.once('data', (chunk) => {
        client.destroy();
        resolve(chunk.toString());
      });
    });

  test('retarget sends new connections to the other server and resets the open ones', async () => {
    const [old, promoted] = [await namedServer('old'), await namedServer('promoted')];
    const proxy = await startTcpProxy({ targetPort: old });
    try {
      expect(await greeting(proxy.port)).toBe('old');
      const held = connect(proxy.port, '127.0.0.1');
      sockets.push(held);
      held.on('error', () => undefined);
      await new Promise<void>((r) => held.once('data', () => r()));
      const reset = new Promise<void>((r) => held.once('close', () => r()));
      proxy.retarget(promoted);
      await reset;
      expect(proxy.targetPort).toBe(promoted);
      expect(await greeting(proxy.port)).toBe('promoted');
    } finally {
      await proxy.close();
    }
  });
});

