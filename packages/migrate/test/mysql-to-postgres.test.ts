import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { MysqlBackend } from '@conclave/mysql';
import { PostgresBackend } from '@conclave/postgres';
import { checkSplitBrain, waitFor } from '@conclave/test-harness';
import { MYSQL_URI, MixedFleet, seeded, type MigrationPair } from './migration-fixtures';

// The same rolling migration as ZooKeeper → MySQL, between two lease-row stores: the machine's
// MariaDB to its PostgreSQL. Forward (old MySQL nodes beside dual ones, then dual beside
// to-only) and back, with hand-overs at every step: never two leaders, and tokens that keep
// increasing whichever store the leader's term came from. As the migrate README requires, a dual
// node leads before the first to-only node starts, and again before the first old node of the
// rollback: only a dual term carries one store's tokens over to the other.
const POSTGRES_URI = process.env.CONCLAVE_POSTGRES_URI ?? 'postgres://root@127.0.0.1:5432/test';
const table = `t_migrate_${randomBytes(4).toString('hex')}`;
const pair: MigrationPair = {
  oldKind: 'mysql',
  from: () => new MysqlBackend({ uri: MYSQL_URI }),
  to: () => new PostgresBackend({ uri: `${POSTGRES_URI}?table=${table}` }),
};
const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);

afterAll(async () => {
  const client = new Client({ connectionString: POSTGRES_URI });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
  } finally {
    await client.end();
  }
});

/** Waits until a dual node leads (a term that holds both stores). */
async function aDualLeads(fleet: MixedFleet): Promise<void> {
  await waitFor(() => fleet.electors.some((e) => e.isLeader() && e.candidateId.startsWith('dual-')), 'a dual node to lead', 30_000);
}

test(`MySQL → PostgreSQL, forward and back, never has two leaders and tokens only go up (seed ${seed})`, async () => {
  const fleet = new MixedFleet(pair);
  try {
    fleet.startSampling();
    const random = seeded(seed);
    // Step 1: old MySQL nodes beside a dual one.
    const old = [await fleet.add('old'), await fleet.add('old')];
    await fleet.add('dual');
    await fleet.churn(2, random);
    // The old nodes are replaced by dual ones, then to-only nodes join (step 2).
    for (const e of old) await e.stop();
    await fleet.add('dual');
    await aDualLeads(fleet);
    const toOnly = [await fleet.add('to-only'), await fleet.add('to-only')];
    await fleet.churn(3, random);
    // Rolled back: the to-only nodes go, an old MySQL node comes back beside the dual ones.
    for (const e of toOnly) await e.stop();
    await aDualLeads(fleet);
    await fleet.add('old');
    await fleet.churn(3, random);

    const report = checkSplitBrain(fleet.history.events);
    expect(fleet.doubleLeaderSamples).toEqual([]);
    expect(report.overlaps).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
    expect(report.staleWork).toEqual([]);
    expect(fleet.workDone).toBeGreaterThan(0);
    // Leaders of more than one kind took part: the tokens were compared across the two stores.
    const kindsThatLed = new Set(report.intervals.map((i) => i.candidateId.replace(/-\d+$/, '')));
    expect(kindsThatLed.size).toBeGreaterThan(1);
  } finally {
    await fleet.close();
  }
});
