import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conclave/test-harness';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { assertBuilt, killAll, MYSQL_URL, REDIS_URL, runConclave, startConclave, uniqueElection } from './cli-process';

/**
 * `conclave run --once`, the scheduled-job mode, end to end: three real processes fired at the
 * same moment on each backend, as cron on three hosts would. CMD appends a line to a file, so the
 * test counts how often it ran.
 */

const NOT_ELECTED = 75;
/**
 * Nothing here waits for a lease to run out (a winner renews through its hold, then releases): a
 * lease long enough that a process starved of the CPU for seconds on a loaded machine still renews
 * in time, so such a delay cannot end a term, or make a grant arrive too late to use.
 */
const LEASE = ['--lease-ms', '10000'];

let dir: string;
let zookeeper: ZookeeperServer | undefined;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'conclave-run-once-'));
  zookeeper = await startZookeeperServer();
}, 90_000);
afterEach(killAll);
afterAll(async () => {
  await zookeeper?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** CMD: appends `<candidate id> <token>` to `file`. */
function appendLine(file: string): string[] {
  return ['sh', '-c', `echo "$CONCLAVE_ID $CONCLAVE_TOKEN" >> '${file}'`];
}

function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
}

const BACKENDS: Array<[string, () => string]> = [
  ['mysql', () => MYSQL_URL],
  ['redis', () => REDIS_URL],
  ['zookeeper', () => `zookeeper://${zookeeper!.connect}?root=/conclave-run-once-test`],
];

describe.each(BACKENDS)('conclave run --once on %s', (_name, url) => {
  test('three hosts fired at the same moment with --wait 0: CMD runs exactly once, the two losers exit 75 while the winner still holds', async () => {
    const election = uniqueElection('once');
    const file = join(dir, `${election}.log`);
    const hosts = ['host-a', 'host-b', 'host-c'].map((id) =>
      startConclave([
        'run', '--once', '--wait', '0', '--hold-at-least', '30s',
        '--backend', url(), '--election', election, '--id', id, ...LEASE,
        '--', ...appendLine(file),
      ]),
    );

    await waitFor(() => hosts.filter((h) => h.exit !== null).length >= 2, 'two losers to exit', 25_000);
    const losers = hosts.filter((h) => h.exit !== null);
    const [winner] = hosts.filter((h) => h.exit === null);
    // The winner holds for 30 s; the losers did not wait for it.
    expect(winner).toBeDefined();
    const winnerId = winner.args[winner.args.indexOf('--id') + 1];
    for (const loser of losers) {
      expect(loser.exit).toEqual({ code: NOT_ELECTED, signal: null });
      // One line on why: the winner, or nobody when the campaign met a term still starting.
      const who = `(${winnerId} leads "${election}" \\(token \\d+\\)|nobody leads "${election}" now)`;
      expect(loser.stderr).toMatch(new RegExp(`^conclave: not elected: ${who}; the command did not run here\\n$`));
    }

    await waitFor(() => linesOf(file).length >= 1, 'the winner to run CMD', 20_000);
    expect(linesOf(file)).toEqual([expect.stringMatching(new RegExp(`^${winnerId} \\d+$`))]);

    // Still holding: the election is taken. A signal skips the rest of the hold and releases.
    const status = await runConclave(['status', '--json', '--backend', url(), '--election', election]);
    expect(JSON.parse(status.stdout)).toMatchObject({ leaderId: winnerId });
    winner.signal('SIGTERM');
    expect(await winner.waitForExit()).toEqual({ code: 0, signal: null });
    expect(linesOf(file)).toHaveLength(1);
  });
});

describe('conclave run --once: holding, waiting, exit codes', () => {
  test('the winner keeps the lease until --hold-at-least after CMD started, then releases and exits with CMD\'s code', async () => {
    const election = uniqueElection('once-hold');
    const marker = join(dir, `${election}.started`);
    const started = Date.now();
    const run = startConclave([
      'run', '--once', '--hold-at-least', '4s', '--backend', REDIS_URL, '--election', election, ...LEASE,
      '--', 'sh', '-c', `touch '${marker}'; exit 5`,
    ]);
    await waitFor(() => existsSync(marker) || run.exit, 'CMD to run', 20_000);
    const cmdAt = Date.now();
    // CMD is done at once; the lease is still held.
    const during = await runConclave(['status', '--json', '--backend', REDIS_URL, '--election', election]);
    expect(JSON.parse(during.stdout)).toMatchObject({ leaderId: expect.any(String) });
    expect(run.exit).toBeNull();

    expect(await run.waitForExit(30_000)).toEqual({ code: 5, signal: null });
    // The hold counts from CMD's start, which came after `started` and before `cmdAt`.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    expect(Date.now() - cmdAt).toBeLessThan(4000 + 10_000);
    const after = await runConclave(['status', '--json', '--backend', REDIS_URL, '--election', election]);
    expect(JSON.parse(after.stdout)).toMatchObject({ leaderId: null });
  });

  test('--wait: a host that is not elected within the wait exits 75 once it is over, with one stderr line naming the leader', async () => {
    const election = uniqueElection('once-wait');
    const file = join(dir, `${election}.log`);
    const winner = startConclave([
      'run', '--once', '--hold-at-least', '30s', '--backend', REDIS_URL, '--election', election, '--id', 'first', ...LEASE,
      '--', ...appendLine(file),
    ]);
    await waitFor(() => linesOf(file).length >= 1 || winner.exit, 'the first host to run CMD', 20_000);
    const waitedFrom = Date.now();
    const late = startConclave([
      'run', '--once', '--wait', '3s', '--backend', REDIS_URL, '--election', election, '--id', 'late', ...LEASE,
      '--', ...appendLine(file),
    ]);
    expect(await late.waitForExit(30_000)).toEqual({ code: NOT_ELECTED, signal: null });
    expect(late.stderr).toMatch(new RegExp(`^conclave: not elected: first leads "${election}" \\(token \\d+\\); the command did not run here\\n$`));
    expect(Date.now() - waitedFrom).toBeGreaterThanOrEqual(3000);
    expect(linesOf(file)).toEqual([expect.stringMatching(/^first \d+$/)]);
    winner.signal('SIGTERM');
    expect(await winner.waitForExit()).toEqual({ code: 0, signal: null });
  });

  test('a CMD that is not found: exit 127 with one line, whether or not this host is elected', async () => {
    const r = await runConclave(['run', '--once', '--backend', REDIS_URL, '--election', uniqueElection('once-404'), '--', 'no-such-command-conclave-test']);
    expect(r.code).toBe(127);
    expect(r.stderr).toMatch(/^conclave: .*not found/);
  });
});
