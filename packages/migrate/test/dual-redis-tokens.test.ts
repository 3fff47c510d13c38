import { randomBytes } from 'node:crypto';
import { Elector, MemoryBackend, MemoryStore, type MemoryBackendOptions } from '@conclave/core';
import type { ElectionBackend } from '@conclave/core/spi';
import { createBackend } from '@conclave/cli';
import { RedisBackend } from '@conclave/redis';
import { MigratingBackend } from '@conclave/migrate';
import { HistoryRecorder, checkSplitBrain, waitFor } from '@conclave/test-harness';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { LEASE_MS, OwnedBackends, startTestZookeeper } from './migration-fixtures';

// ZooKeeper → Redis: Redis's default clock floor makes a new term's token the server's time in
// ms. A `from` that cannot raise its token floor could never follow it, and the dual backend
// refuses that pair; ZooKeeper raises its floor (czxid + offset tokens), so old and dual leaders
// share one increasing sequence with the clock floor on or off.
const REDIS_URL = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

const owned = new OwnedBackends();
afterEach(() => owned.closeAll());
const keep = <T extends ElectionBackend>(b: T): T => owned.keep(b);
/** A memory backend without the `tokenFloor` part (nor `leaderChanges`). */
class NoFloorBackend extends MemoryBackend {
  constructor(options: MemoryBackendOptions) {
    super(options);
    Object.defineProperties(this, { tokenFloor: { value: undefined }, leaderChanges: { value: undefined } });
  }
}
const zookeeper = () => owned.zookeeper(zk);

describe('a to whose tokens follow its clock', () => {
  test('is refused in dual beside a from that cannot raise its token floor (INVALID_OPTIONS)', () => {
    const from = keep(new NoFloorBackend({ store: new MemoryStore() }));
    expect(() => new MigratingBackend({ from, to: keep(new RedisBackend({ url: REDIS_URL })), phase: 'dual' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('tokenClockFloor: false') }),
    );
  });

  test('is accepted with the clock floor off, beside a from that can raise its floor, and outside dual', () => {
    const pairs: Array<[ElectionBackend, ElectionBackend, 'dual' | 'from-only' | 'to-only']> = [
      [zookeeper(), keep(new RedisBackend({ url: REDIS_URL, tokenClockFloor: false })), 'dual'],
      [zookeeper(), keep(new RedisBackend({ url: REDIS_URL })), 'dual'],
      [owned.mysql(), keep(new RedisBackend({ url: REDIS_URL })), 'dual'],
      [zookeeper(), keep(new RedisBackend({ url: REDIS_URL })), 'from-only'],
      [zookeeper(), keep(new RedisBackend({ url: REDIS_URL })), 'to-only'],
    ];
    for (const [from, to, phase] of pairs) {
      expect(new MigratingBackend({ from, to, phase, closeBackends: false }).phase).toBe(phase);
    }
  });

  test('the URL form takes tokenClockFloor=false on the Redis URL', async () => {
    const zkUrl = `zookeeper://${zk.connect}`;
    const url = (redis: string) => `migrate:dual?from=${encodeURIComponent(zkUrl)}&to=${encodeURIComponent(redis)}`;
    for (const redis of [`${REDIS_URL}?tokenClockFloor=false`, REDIS_URL]) {
      const backend = keep(createBackend(url(redis)));
      expect(backend.kind).toBe('migrate');
    }
    expect(() => createBackend(`${REDIS_URL}?tokenClockFloor=maybe`)).toThrow(expect.objectContaining({ code: 'INVALID_URL' }));
  });
});

test.each([false, true])('old ZooKeeper and dual ZooKeeper → Redis candidates (clock floor %s) through 10 hand-overs: one increasing token sequence', async (tokenClockFloor) => {
  const election = `zk-redis-${randomBytes(4).toString('hex')}`;
  const history = new HistoryRecorder();
  const electors: Elector[] = [];
  const kinds = ['old', 'dual', 'old', 'dual'] as const;
  try {
    for (const [i, kind] of kinds.entries()) {
      const backend =
        kind === 'old'
          ? zookeeper()
          : keep(
              new MigratingBackend({
                from: zookeeper(),
                to: keep(new RedisBackend({ url: REDIS_URL, tokenClockFloor })),
                phase: 'dual',
                closeBackends: false,
              }),
            );
      const elector = new Elector({ backend, election, candidateId: `${kind}-${i + 1}`, leaseMs: LEASE_MS });
      electors.push(elector);
      history.attach(elector);
      await elector.start();
    }
    for (let round = 0; round < 10; round++) {
      const leader = await waitFor(() => electors.find((e) => e.isLeader()), `a leader in round ${round}`, 20_000);
      const token = leader.token!;
      await leader.stepDown();
      await waitFor(() => electors.some((e) => e.isLeader() && e.token !== token), `a new term after round ${round}`, 20_000);
    }
    const report = checkSplitBrain(history.events);
    expect(report.overlaps).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
    const kindsThatLed = new Set(report.intervals.map((i) => i.candidateId.replace(/-\d+$/, '')));
    expect([...kindsThatLed].sort()).toEqual(['dual', 'old']);
  } finally {
    history.detach();
    await Promise.all(electors.map((e) => e.stop()));
  }
});
