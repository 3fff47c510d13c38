import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startExample, killAll, uniqueElection, EXAMPLES_DIR, type ExampleProcess } from './example-process';

const CLI = join(EXAMPLES_DIR, '..', 'packages', 'cli', 'dist', 'main.js');
const REDIS_URL = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MYSQL_URI = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';

/** Runs `conclave run --once … -- node -e …` as a crontab line would; resolves with its exit code and output. */
function conclaveRunOnce(election: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const args = [CLI, 'run', '--once', '--hold-at-least', '2s', '--backend', MYSQL_URI, '--election', election, '--',
      process.execPath, '-e', 'console.log("report ran with token " + process.env.CONCLAVE_TOKEN)'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('examples/cron-job', () => {
  const processes: ExampleProcess[] = [];
  afterAll(() => killAll(processes));

  test('three hosts on one schedule: every tick runs on exactly one host', async () => {
    const election = uniqueElection('example-cron');
    for (const host of ['a', 'b', 'c']) {
      // Every 3 s, holding 2 s: a host that fires up to 2 s late still finds the tick taken.
      processes.push(
        startExample('cron-job/scheduler.mjs', { HOST_NAME: host, ELECTION: election, CONCLAVE_REDIS_URL: REDIS_URL, SCHEDULE: '*/3 * * * * *', HOLD_MS: '2000' }),
      );
    }
    // Two ticks decided on every host (each host prints "ran" or "skipped" per tick).
    const decided = (p: ExampleProcess) => p.lines.filter((l) => /^(ran|skipped) tick/.test(l)).length;
    const deadline = Date.now() + 12_000;
    while (processes.some((p) => decided(p) < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await killAll(processes);

    const runsPerTick = new Map<string, number>();
    const allTicks = new Set<string>();
    for (const line of processes.flatMap((p) => p.lines)) {
      const m = /^(ran|skipped) tick (\S+)/.exec(line);
      if (!m) continue;
      allTicks.add(m[2]!);
      if (m[1] === 'ran') runsPerTick.set(m[2]!, (runsPerTick.get(m[2]!) ?? 0) + 1);
    }
    expect(allTicks.size).toBeGreaterThanOrEqual(2);
    for (const tick of allTicks) expect([tick, runsPerTick.get(tick) ?? 0]).toEqual([tick, 1]);
  }, 20_000);

  test('the crontab form: three `conclave run --once` fired together, one runs the job, the others exit 75', async () => {
    const election = uniqueElection('example-crontab');
    const results = await Promise.all([0, 1, 2].map(() => conclaveRunOnce(election)));
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 75, 75]);
    expect(results.filter((r) => /report ran with token \d+/.test(r.out))).toHaveLength(1);
  }, 20_000);
});
