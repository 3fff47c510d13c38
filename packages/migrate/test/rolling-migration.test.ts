import { randomBytes } from 'node:crypto';
import { CandidateProcess, checkSplitBrain, summarize, waitFor, type ZookeeperServer } from '@conclave/test-harness';
import { LEASE_MS, MYSQL_URI, SESSION_TIMEOUT_MS, seeded, startTestZookeeper } from './migration-fixtures';

// The design card's central use, with real processes and real servers: a fleet of 5 candidates
// moves from ZooKeeper to MySQL one process at a time (old binaries → dual → to-only), with
// random crashes and restarts along the way. The split-brain checker reads every process's
// history on the shared monotonic clock.
let zk: ZookeeperServer;
const started: CandidateProcess[] = [];
beforeAll(async () => {
  zk = await startTestZookeeper();
});
afterAll(async () => {
  for (const c of started) c.kill('SIGKILL');
  await zk?.close();
});

const seed = Number(process.env.CONCLAVE_SEED ?? Date.now() % 100_000);

test(`a rolling migration of 5 processes with crashes never has two leaders (seed ${seed})`, async () => {
  const random = seeded(seed);
  const election = `rolling-${randomBytes(4).toString('hex')}`;
  const zkUrl = `zookeeper://${zk.connect}?sessionTimeoutMs=${SESSION_TIMEOUT_MS}`;
  const migrate = (phase: string) =>
    `migrate:${phase}?from=${encodeURIComponent(zkUrl)}&to=${encodeURIComponent(MYSQL_URI)}`;
  const urls = { old: zkUrl, dual: migrate('dual'), 'to-only': migrate('to-only') } as const;
  type Kind = keyof typeof urls;
  let counter = 0;
  const launch = async (kind: Kind) => {
    const candidate = await CandidateProcess.start({
      backend: urls[kind],
      election,
      candidateId: `${kind}-${++counter}`,
      leaseMs: LEASE_MS,
      workIntervalMs: 20,
    });
    started.push(candidate);
    return candidate;
  };
  const someoneLeads = (fleet: CandidateProcess[]) => waitFor(() => fleet.some((c) => c.leading), 'a leader', 30_000, 20);

  const fleet: Array<{ kind: Kind; process: CandidateProcess }> = [];
  for (let i = 0; i < 5; i++) fleet.push({ kind: 'old', process: await launch('old') });
  await someoneLeads(fleet.map((s) => s.process));
  let crashes = 0;

  for (const next of ['dual', 'to-only'] as const) {
    for (let i = 0; i < fleet.length; i++) {
      if (random() < 0.4) {
        // A crash somewhere in the fleet: SIGKILL, then the orchestrator restarts it as it was.
        const victim = fleet[Math.floor(random() * fleet.length)]!;
        victim.process.kill('SIGKILL');
        crashes++;
        victim.process = await launch(victim.kind);
      }
      // Roll this slot forward: a graceful stop (release), then the new binary.
      await fleet[i]!.process.stop();
      fleet[i] = { kind: next, process: await launch(next) };
      await someoneLeads(fleet.map((s) => s.process));
    }
  }
  // Let the new fleet hand over a couple of times on MySQL alone.
  for (let i = 0; i < 2; i++) {
    const leader = fleet.find((s) => s.process.leading)!;
    await leader.process.stop();
    leader.process = await launch('to-only');
    await someoneLeads(fleet.map((s) => s.process));
  }
  for (const slot of fleet) await slot.process.stop();

  const report = checkSplitBrain(started.flatMap((c) => c.history()));
  // Visible in the test output: how much happened.
  console.log(`rolling migration (seed ${seed}): ${summarize(report)}, crashes: ${crashes}, processes: ${started.length}`);
  expect(report.overlaps).toEqual([]);
  expect(report.staleWork).toEqual([]);
  expect(report.tokenRegressions).toEqual([]);
  expect(report.workOutsideTerm).toEqual([]);
  const kindsThatLed = new Set(report.intervals.map((i) => i.candidateId.replace(/-\d+$/, '')));
  expect([...kindsThatLed].sort()).toEqual(['dual', 'old', 'to-only']);
}, 300_000);
