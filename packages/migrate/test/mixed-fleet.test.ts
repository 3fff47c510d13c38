import { checkSplitBrain } from '@conclave/test-harness';
import type { ZookeeperServer } from '@conclave/zookeeper/testing';
import { MixedFleet, zookeeperToMysql, seeded, startTestZookeeper, type NodeKind } from './migration-fixtures';

// Every mix of kinds that a rolling ZooKeeper → MySQL migration (or its rollback) can run at
// once, on a real ZooKeeper and the real MariaDB: never two leaders, and tokens that keep
// increasing across every kind of leader.
let zk: ZookeeperServer;
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  await zk?.close();
});

const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);

const MIXES: Array<[string, NodeKind[], { tokens: boolean }]> = [
  ['old ZooKeeper nodes beside dual nodes (step 1)', ['old', 'dual', 'old', 'dual'], { tokens: true }],
  ['dual nodes beside to-only nodes (step 2)', ['dual', 'to-only', 'dual', 'to-only'], { tokens: true }],
  ['migrating nodes still in from-only beside dual nodes', ['from-only', 'dual', 'old'], { tokens: true }],
];

describe.each(MIXES)('a fleet of %s', (_name, kinds, expect_) => {
  let fleet: MixedFleet;
  afterEach(async () => {
    await fleet.close();
  });

  test(`never two leaders through 8 hand-overs (seed ${seed})`, async () => {
    fleet = new MixedFleet(zookeeperToMysql(zk));
    for (const kind of kinds) await fleet.add(kind);
    fleet.startSampling();
    await fleet.churn(8, seeded(seed));
    const report = checkSplitBrain(fleet.history.events);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(report.overlaps).toEqual([]);
    if (expect_.tokens) expect(report.tokenRegressions).toEqual([]);
    expect(fleet.workDone).toBeGreaterThan(0);
    expect(report.staleWork).toEqual([]);
    // Leaders of more than one kind took part.
    const kindsThatLed = new Set(report.intervals.map((i) => i.candidateId.replace(/-\d+$/, '')));
    expect(kindsThatLed.size).toBeGreaterThan(1);
  });
});

test(`a rollback: to-only and dual, then dual and from-only again, never two leaders (seed ${seed})`, async () => {
  const fleet = new MixedFleet(zookeeperToMysql(zk));
  try {
    fleet.startSampling();
    const random = seeded(seed + 1);
    const toOnly = [await fleet.add('to-only'), await fleet.add('to-only')];
    await fleet.add('dual');
    await fleet.churn(3, random);
    // Roll back step 2: the to-only nodes go, dual nodes come.
    for (const e of toOnly) await e.stop();
    await fleet.add('dual');
    await fleet.churn(3, random);
    // Roll back step 1: old ZooKeeper nodes come back beside the dual ones.
    await fleet.add('old');
    await fleet.add('old');
    await fleet.churn(4, random);
    const report = checkSplitBrain(fleet.history.events);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(report.overlaps).toEqual([]);
    expect(fleet.workDone).toBeGreaterThan(0);
    // Tokens keep increasing through every step back, old ZooKeeper-only nodes included: dual
    // leaders raise ZooKeeper's token floor above their MySQL tokens.
    expect(report.tokenRegressions).toEqual([]);
    expect(report.staleWork).toEqual([]);
    expect(report.intervals.some((i) => i.candidateId.startsWith('zookeeper-'))).toBe(true);
  } finally {
    await fleet.close();
  }
});
