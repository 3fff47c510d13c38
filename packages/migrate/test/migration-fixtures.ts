import { randomBytes } from 'node:crypto';
import { Elector, type ElectionBackend } from '@conclave/core';
import { MysqlBackend } from '@conclave/mysql';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { MigratingBackend, type MigrationPhase } from '@conclave/migrate';
import { HistoryRecorder, waitFor } from '@conclave/test-harness';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';

export const MYSQL_URI = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';
/** ZooKeeper session for the tests: the private server ticks every 200 ms, so it is granted. */
export const SESSION_TIMEOUT_MS = 3000;
export const LEASE_MS = 1500;

/** A backend on the test's private ZooKeeper (or a proxy to it), with the tests' session timeout. */
export function zookeeperBackend(zk: Pick<ZookeeperServer, 'connect'>): ZookeeperBackend {
  return new ZookeeperBackend({ connect: zk.connect, sessionTimeoutMs: SESSION_TIMEOUT_MS, requestTimeoutMs: 3000 });
}

/** Backends a test file opens call by call; `closeAll()` (in afterEach) closes every one. */
export class OwnedBackends {
  private readonly owned: ElectionBackend[] = [];

  keep<T extends ElectionBackend>(backend: T): T {
    this.owned.push(backend);
    return backend;
  }

  zookeeper(zk: ZookeeperServer): ZookeeperBackend {
    return this.keep(zookeeperBackend(zk));
  }

  mysql(): MysqlBackend {
    return this.keep(new MysqlBackend({ uri: MYSQL_URI }));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.owned.splice(0).map((b) => b.close().catch(() => undefined)));
  }
}

/** What a process of the fleet runs: an old binary on the `from` store alone, or the migrating backend in a phase. */
export type NodeKind = 'old' | MigrationPhase;

/** The two stores of a migration, and how a fleet opens a backend on each. */
export interface MigrationPair {
  /** Names an old node's candidate ids (`zookeeper-3`), so histories read well. */
  readonly oldKind: string;
  from(): ElectionBackend;
  to(): ElectionBackend;
}

/** ZooKeeper (the test's private server) → the machine's MariaDB. */
export function zookeeperToMysql(zk: ZookeeperServer): MigrationPair {
  return { oldKind: 'zookeeper', from: () => zookeeperBackend(zk), to: () => new MysqlBackend({ uri: MYSQL_URI }) };
}

/** A fleet of in-process candidates of mixed kinds on the real servers of a migration pair. */
export class MixedFleet {
  readonly history = new HistoryRecorder();
  readonly electors: Elector[] = [];
  private readonly backends: ElectionBackend[] = [];
  private readonly leaderSamples: string[][] = [];
  private sampler: NodeJS.Timeout | null = null;
  private counter = 0;

  constructor(
    private readonly pair: MigrationPair,
    readonly election = `migration-${randomBytes(4).toString('hex')}`,
    readonly leaseMs = LEASE_MS,
  ) {}

  backend(kind: NodeKind): ElectionBackend {
    const { from, to } = this.pair;
    const backend = kind === 'old' ? from() : new MigratingBackend({ from: from(), to: to(), phase: kind });
    this.backends.push(backend);
    return backend;
  }

  /** Starts a candidate of `kind`; its id names its kind, so histories read well. */
  async add(kind: NodeKind): Promise<Elector> {
    const elector = new Elector({
      backend: this.backend(kind),
      election: this.election,
      candidateId: `${kind === 'old' ? this.pair.oldKind : kind}-${++this.counter}`,
      leaseMs: this.leaseMs,
    });
    this.electors.push(elector);
    this.history.attach(elector);
    await elector.start();
    return elector;
  }

  /**
   * Samples every few ms who believes it leads; more than one at once is a split brain. Each
   * leader also records a unit of work (guarded by isLeader(), as users' code is), so the checker
   * can find work done after a newer term began.
   */
  startSampling(): void {
    this.sampler = setInterval(() => {
      for (const e of this.electors) this.history.work(e);
      const leading = this.electors.filter((e) => e.isLeader()).map((e) => e.candidateId);
      if (leading.length > 1) this.leaderSamples.push(leading);
    }, 5);
  }

  /** Units of work recorded so far. */
  get workDone(): number {
    return this.history.events.filter((e) => e.kind === 'work').length;
  }

  get doubleLeaderSamples(): string[][] {
    return this.leaderSamples;
  }

  /** Waits for one leader, then makes it step down or restart; repeats `rounds` times. */
  async churn(rounds: number, random: () => number): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      const leader = await waitFor(() => this.electors.find((e) => e.isLeader()), `a leader in round ${round}`, 30_000);
      const token = leader.token!;
      // Let the leader act before it is moved on: a term that never records work leaves the
      // stale-work check nothing to judge (a hand-over can be quicker than the sampler's tick).
      await waitFor(
        () => !leader.isLeader() || this.history.events.some((e) => e.kind === 'work' && e.token === token && e.candidateId === leader.candidateId),
        `work in round ${round}`,
        30_000,
      );
      if (random() < 0.5) await leader.stepDown();
      else {
        await leader.stop();
        await leader.start();
      }
      await waitFor(
        () => this.electors.some((e) => e.isLeader() && e.token !== token),
        `a new term after round ${round}`,
        30_000,
      );
    }
  }

  async close(): Promise<void> {
    if (this.sampler) clearInterval(this.sampler);
    this.history.detach();
    await Promise.all(this.electors.map((e) => e.stop()));
    await Promise.all(this.backends.map((b) => b.close().catch(() => undefined)));
  }
}

export async function startTestZookeeper(): Promise<ZookeeperServer> {
  return startZookeeperServer();
}

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
