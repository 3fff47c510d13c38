import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Elector, type ElectionBackend } from '@conclave/core';
import { MysqlBackend } from '@conclave/mysql';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { MigratingBackend } from '@conclave/migrate';
import {
  HistoryRecorder,
  checkSplitBrain,
  delay,
  monotonicMs,
  startTcpProxy,
  waitFor,
  type TcpProxy,
} from '@conclave/test-harness';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { LEASE_MS, MYSQL_URI, SESSION_TIMEOUT_MS, startTestZookeeper } from './migration-fixtures';

// Step 1 of a ZooKeeper → MySQL migration (old ZooKeeper-only candidates beside dual ones) with
// faults on one side: MySQL cut off or frozen under a dual candidate, and admin commands run on
// one backend only. Whatever happens to MySQL, the old candidates must be able to lead (a dual
// candidate that cannot lead does not keep ZooKeeper's lease), never beside a dual leader, and
// every term's token is greater than the one before, whichever kind of candidate led.
//
// The bound for an old candidate to lead once MySQL fails under a dual leader: the dual leader
// keeps leading until the lease it last renewed runs out (at most LEASE_MS), then gives its
// ZooKeeper node back at once; the old candidate, woken by its predecessor watch, confirms its
// node through ZooKeeper in a few round trips. HAND_OVER_SLACK_MS covers those round trips on a
// busy machine.
const HAND_OVER_SLACK_MS = 500;
const LEAD_BOUND_MS = LEASE_MS + HAND_OVER_SLACK_MS;

let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

const MYSQL_PORT = Number(new URL(MYSQL_URI).port || 3306);

/** In-process candidates: old ones on ZooKeeper, dual ones whose MySQL goes through a proxy. */
class FaultFleet {
  readonly history = new HistoryRecorder();
  readonly electors: Elector[] = [];
  readonly election = `dual-faults-${randomBytes(4).toString('hex')}`;
  private readonly backends: ElectionBackend[] = [];
  private readonly doubles: string[][] = [];
  private readonly sampler: NodeJS.Timeout;
  private counter = 0;

  constructor(readonly proxy: TcpProxy) {
    this.sampler = setInterval(() => {
      const leading = this.electors.filter((e) => e.isLeader()).map((e) => e.candidateId);
      if (leading.length > 1) this.doubles.push(leading);
    }, 5);
  }

  zookeeper(): ZookeeperBackend {
    const backend = new ZookeeperBackend({ connect: zk.connect, sessionTimeoutMs: SESSION_TIMEOUT_MS, requestTimeoutMs: 3000 });
    this.backends.push(backend);
    return backend;
  }

  /** MySQL through the proxy: what the proxy does to it happens to the dual candidates. */
  mysql(): MysqlBackend {
    const uri = new URL(MYSQL_URI);
    uri.port = String(this.proxy.port);
    const backend = new MysqlBackend({ uri: uri.toString(), queryTimeoutMs: 3000 });
    this.backends.push(backend);
    return backend;
  }

  /** MySQL directly (admin commands). */
  mysqlDirect(): MysqlBackend {
    const backend = new MysqlBackend({ uri: MYSQL_URI });
    this.backends.push(backend);
    return backend;
  }

  /** ZooKeeper through `proxy`: what the proxy does to it happens to this candidate alone. */
  zookeeperVia(proxy: TcpProxy): ZookeeperBackend {
    const backend = new ZookeeperBackend({ connect: proxy.address, sessionTimeoutMs: SESSION_TIMEOUT_MS, requestTimeoutMs: 3000 });
    this.backends.push(backend);
    return backend;
  }

  async add(kind: 'old' | 'dual' | 'to-only', zookeeperProxy?: TcpProxy): Promise<Elector> {
    const from = () => (zookeeperProxy ? this.zookeeperVia(zookeeperProxy) : this.zookeeper());
    const backend =
      kind === 'old'
        ? from()
        : new MigratingBackend({ from: from(), to: this.mysql(), phase: kind, closeBackends: false });
    const elector = new Elector({ backend, election: this.election, candidateId: `${kind}-${++this.counter}`, leaseMs: LEASE_MS });
    this.electors.push(elector);
    this.history.attach(elector);
    await elector.start();
    return elector;
  }

  leader(): Elector | undefined {
    return this.electors.find((e) => e.isLeader());
  }

  /** Waits until `who` leads; resolves with the time it took from `since`. */
  async leads(who: (e: Elector) => boolean, what: string, since = performance.now()): Promise<number> {
    await waitFor(() => this.electors.some((e) => e.isLeader() && who(e)), what, 20_000, 5);
    return performance.now() - since;
  }

  /** Hand-overs: the leader steps down `rounds` times; each time a new term must start. */
  async churn(rounds: number): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      const leader = await waitFor(() => this.leader(), `a leader in round ${round}`, 20_000);
      const token = leader.token!;
      await leader.stepDown();
      await waitFor(() => this.electors.some((e) => e.isLeader() && e.token !== token), `a new term after round ${round}`, 20_000);
    }
  }

  /**
   * No overlap (sampled and from the histories) and no token going down. `clearedToken`: the term
   * an admin command cleared, which may overlap the next one until its holder renews (as on every
   * backend: only its token tells the two apart).
   */
  expectOneTokenSequence(clearedToken?: number): void {
    const report = checkSplitBrain(this.history.events);
    if (clearedToken === undefined) expect(this.doubles).toEqual([]);
    expect(report.overlaps.filter(([a, b]) => a.token !== clearedToken && b.token !== clearedToken)).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
  }

  async close(): Promise<void> {
    clearInterval(this.sampler);
    this.history.detach();
    this.proxy.resume();
    await Promise.all(this.electors.map((e) => e.stop()));
    await Promise.all(this.backends.map((b) => b.close().catch(() => undefined)));
    await this.proxy.close();
  }
}

let fleet: FaultFleet;
beforeEach(async () => {
  fleet = new FaultFleet(await startTcpProxy({ targetPort: MYSQL_PORT }));
});
afterEach(async () => {
  await fleet.close();
});

const isOld = (e: Elector) => e.candidateId.startsWith('old-');
const isDual = (e: Elector) => e.candidateId.startsWith('dual-');

describe.each([
  ['cut off (connections reset)', (p: TcpProxy) => p.cut()],
  ['frozen (no byte moves)', (p: TcpProxy) => p.blackhole()],
])('MySQL %s under a dual leader', (_name, fault) => {
  test(`an old candidate leads within a lease + ${HAND_OVER_SLACK_MS} ms; after the heal tokens keep increasing`, async () => {
    await fleet.add('dual');
    await fleet.leads(isDual, 'the dual candidate to lead');
    await fleet.add('old');
    // The fault must start under a dual leader. On a loaded machine the dual one may give
    // ZooKeeper back (MySQL slower than half a lease, as documented) and the old one lead: it is
    // then made to step down until the dual one leads again, the old one queued behind it.
    await waitFor(async () => {
      const leader = fleet.leader();
      if (leader && isOld(leader)) await leader.stepDown();
      return leader !== undefined && isDual(leader);
    }, 'the dual candidate to lead, the old one queued behind it', 20_000, 50);

    const faultAt = performance.now();
    fault(fleet.proxy);
    const took = await fleet.leads(isOld, 'the old candidate to lead', faultAt);
    expect(took).toBeLessThanOrEqual(LEAD_BOUND_MS);

    fleet.proxy.resume();
    const healedAt = monotonicMs();
    await fleet.churn(4);
    // Two candidates taking turns: the dual one led again after the heal.
    const report = checkSplitBrain(fleet.history.events);
    expect(report.intervals.some((i) => i.startMs > healedAt && i.candidateId.startsWith('dual-'))).toBe(true);
    fleet.expectOneTokenSequence();
  });
});

test(`MySQL frozen before the dual candidate reaches the head: an old candidate leads within a lease + ${HAND_OVER_SLACK_MS} ms`, async () => {
  fleet.proxy.blackhole();
  await fleet.add('dual');
  const oldStartedAt = performance.now();
  await fleet.add('old');
  const took = await fleet.leads(isOld, 'the old candidate to lead', oldStartedAt);
  expect(took).toBeLessThanOrEqual(LEAD_BOUND_MS);
  fleet.proxy.resume();
  await fleet.churn(3);
  fleet.expectOneTokenSequence();
});

test('a 2.5 s MySQL blip under a dual leader, then hand-overs: old and dual leaders share one increasing token sequence', async () => {
  await fleet.add('dual');
  await fleet.leads(isDual, 'the dual candidate to lead');
  await fleet.add('old');
  await fleet.add('dual');
  await fleet.add('old');
  fleet.proxy.blackhole();
  await delay(2500);
  fleet.proxy.resume();
  await fleet.churn(8);
  fleet.expectOneTokenSequence();
});

describe('an admin command on one backend only, while a dual candidate leads', () => {
  test(`clearLeader on MySQL: an old candidate leads next, within a lease + ${HAND_OVER_SLACK_MS} ms, with a greater token`, async () => {
    const dual = await fleet.add('dual');
    await fleet.leads(isDual, 'the dual candidate to lead');
    const old = await fleet.add('old');
    await delay(200);
    const dualToken = dual.token!;
    const clearedAt = performance.now();
    await fleet.mysqlDirect().admin!.clearLeader(fleet.election);
    const took = await fleet.leads(isOld, 'the old candidate to lead', clearedAt);
    expect(took).toBeLessThanOrEqual(LEAD_BOUND_MS);
    expect(old.token!).toBeGreaterThan(dualToken);
    await fleet.churn(4);
    fleet.expectOneTokenSequence();
  });

  test(`clearLeader on ZooKeeper: the next candidate leads within a lease + ${HAND_OVER_SLACK_MS} ms, with a greater token`, async () => {
    const dual = await fleet.add('dual');
    await fleet.leads(isDual, 'the dual candidate to lead');
    await fleet.add('old');
    await delay(200);
    const dualToken = dual.token!;
    const clearedAt = performance.now();
    await fleet.zookeeper().admin!.clearLeader(fleet.election);
    await waitFor(() => fleet.electors.some((e) => e.isLeader() && e.token! > dualToken), 'a new term', 20_000, 5);
    expect(performance.now() - clearedAt).toBeLessThanOrEqual(LEAD_BOUND_MS);
    await fleet.churn(4);
    fleet.expectOneTokenSequence(dualToken);
  });
});

test(`losing ZooKeeper gives MySQL back at once: after a ZooKeeper-only clearLeader the cleared leader's MySQL lease ends within half a lease of it learning, and a dual candidate leads again within a lease + a retry + ${HAND_OVER_SLACK_MS} ms`, async () => {
  const first = await fleet.add('dual');
  await fleet.leads(isDual, 'a dual candidate to lead');
  await fleet.add('dual');
  await delay(200);
  expect(fleet.leader()).toBe(first);
  const token = first.token!;
  let learnedAt: number | null = null;
  first.isLeader$.subscribe((leading) => {
    if (!leading) learnedAt ??= performance.now();
  });
  // When MySQL stops naming the cleared leader, read directly (not through the proxy). MySQL's
  // term is its own: the leader is told by its id.
  const mysql = fleet.mysqlDirect();
  const mysqlNamesFirst = async () => (await mysql.getLeader(fleet.election))?.candidateId === first.candidateId;
  await waitFor(mysqlNamesFirst, 'MySQL to name the dual leader');
  let mysqlFreedAt: number | null = null;
  const clearedAt = performance.now();
  await fleet.zookeeper().admin!.clearLeader(fleet.election);
  await waitFor(
    async () => {
      if (!(await mysqlNamesFirst())) mysqlFreedAt ??= performance.now();
      return mysqlFreedAt !== null;
    },
    "MySQL to let the cleared term's lease go",
    20_000,
    5,
  );
  // The cleared leader learns at its next ZooKeeper renewal and gives MySQL back in one round
  // trip. Kept instead, the MySQL lease it renewed in that same round would last about a lease
  // more: half a lease tells the two apart with room for a loaded machine on both sides.
  // It gives MySQL back before it turns follower (the release is part of the failed renewal).
  await waitFor(() => learnedAt !== null, 'the cleared leader to learn');
  expect(mysqlFreedAt! - learnedAt!).toBeLessThanOrEqual(LEASE_MS / 2);
  // The next dual candidate waits out ZooKeeper's fence (the cleared node's lease), then
  // campaigns when woken, or at its next retry when the wake-up is missed, in a few round trips.
  await waitFor(() => fleet.electors.some((e) => e.isLeader() && e.token! > token), 'a new dual term', 20_000, 5);
  expect(performance.now() - clearedAt).toBeLessThanOrEqual(LEASE_MS + first.options.retryMs + HAND_OVER_SLACK_MS);
  await fleet.churn(4);
  fleet.expectOneTokenSequence(token);
});

test(`ZooKeeper cut off under a dual leader (its session expires): an old candidate leads within the session timeout + ${HAND_OVER_SLACK_MS} ms, never beside it`, async () => {
  // Only the dual candidate's ZooKeeper goes through this proxy.
  const zkProxy = await startTcpProxy({ targetPort: zk.port });
  try {
    const dual = await fleet.add('dual', zkProxy);
    await fleet.leads(isDual, 'the dual candidate to lead');
    await fleet.add('old');
    await delay(200);
    expect(fleet.leader()).toBe(dual);
    const cutAt = performance.now();
    zkProxy.cut();
    // The dual leader stops at its lease deadline; its node goes when ZooKeeper expires the session.
    const took = await fleet.leads(isOld, 'the old candidate to lead', cutAt);
    expect(took).toBeLessThanOrEqual(SESSION_TIMEOUT_MS + HAND_OVER_SLACK_MS);
    zkProxy.resume();
    const healedAt = monotonicMs();
    await fleet.churn(4);
    const report = checkSplitBrain(fleet.history.events);
    expect(report.intervals.some((i) => i.startMs > healedAt && i.candidateId.startsWith('dual-'))).toBe(true);
    fleet.expectOneTokenSequence();
  } finally {
    zkProxy.resume();
    await Promise.all(fleet.electors.map((e) => e.stop()));
    await zkProxy.close();
  }
});

test(`step 2 (dual + to-only) with a 2.5 s MySQL blip: a leader within a lease + ${HAND_OVER_SLACK_MS} ms of the heal, then one increasing token sequence`, async () => {
  await fleet.add('dual');
  await fleet.add('to-only');
  await fleet.add('dual');
  await fleet.add('to-only');
  await waitFor(() => fleet.leader(), 'a leader', 20_000);
  fleet.proxy.blackhole();
  await delay(2500);
  const healedAt = performance.now();
  fleet.proxy.resume();
  const took = await fleet.leads(() => true, 'a leader after the heal', healedAt);
  expect(took).toBeLessThanOrEqual(LEAD_BOUND_MS);
  await fleet.churn(8);
  fleet.expectOneTokenSequence();
});

test('forceLeader on MySQL alone, to another dual candidate, while a dual candidate leads: no token regression afterwards', async () => {
  const first = await fleet.add('dual');
  await fleet.leads(isDual, 'a dual candidate to lead');
  await fleet.add('old');
  await fleet.add('dual');
  await delay(200);
  const token = first.token!;
  await fleet.mysqlDirect().admin!.forceLeader(fleet.election, 'dual-3');
  await waitFor(() => fleet.electors.some((e) => e.isLeader() && e.token! > token), 'a new term', 20_000, 5);
  await fleet.churn(6);
  // forceLeader starts the forced term only once the one it revoked has ended: no overlap.
  expect(checkSplitBrain(fleet.history.events).overlaps).toEqual([]);
  fleet.expectOneTokenSequence(token);
});
