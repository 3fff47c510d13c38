import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay, waitFor } from '@conclave/test-harness';
import { RedisServer } from '@conclave/redis/testing';
import {
  assertBuilt,
  isAlive,
  killAll,
  killPids,
  MYSQL_URL,
  REDIS_URL,
  startConclave,
  uniqueElection,
  type ConclaveProcess,
} from './cli-process';

/**
 * `conclave run -- CMD` end to end: CMD is a node one-liner that writes its pid and token, then
 * appends `Date.now()` to a file every 50 ms, so the test can see when it runs and when it stops.
 */

let dir: string;
const childPids = new Set<number>();

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'conclave-cli-run-'));
});
afterEach(async () => {
  await killAll();
  killPids(childPids); // only if a test failed before its CMD was stopped
  childPids.clear();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LEASE = ['--lease-ms', '1500'];
/**
 * For tests where nothing waits for a lease to run out (the lease is released): long enough that
 * a process starved of the CPU for seconds on a loaded machine still renews in time, so such a
 * delay cannot end its term and put a warning on stderr.
 */
const RELEASED_LEASE = ['--lease-ms', '10000'];
/** A take-over after a release comes within this, half of RELEASED_LEASE: not by the lease's end. */
const AFTER_RELEASE_MS = 5000;

/** CMD: `start <pid> <token>` once, then a timestamp every 50 ms (SIGTERM ends it, the default). */
function ticker(file: string): string[] {
  const script = [
    "const fs = require('fs');",
    `const file = ${JSON.stringify(file)};`,
    "fs.appendFileSync(file, 'start ' + process.pid + ' ' + process.env.CONCLAVE_TOKEN + '\\n');",
    "setInterval(() => fs.appendFileSync(file, 'tick ' + Date.now() + '\\n'), 50);",
  ].join(' ');
  return [process.execPath, '-e', script];
}

interface TickerLog {
  starts: Array<{ pid: number; token: number }>;
  ticks: number[];
}

function readLog(file: string): TickerLog {
  const log: TickerLog = { starts: [], ticks: [] };
  if (!existsSync(file)) return log;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [kind, a, b] = line.split(' ');
    if (kind === 'start') log.starts.push({ pid: Number(a), token: Number(b) });
    // A line cut short by SIGKILL is not a tick.
    else if (kind === 'tick' && /^\d{13}$/.test(a ?? '')) log.ticks.push(Number(a));
  }
  for (const s of log.starts) childPids.add(s.pid);
  return log;
}

/** Starts `conclave run` with the ticker and waits until CMD has ticked. */
async function startRun(url: string, election: string, file: string, extra: string[] = [], lease = LEASE): Promise<ConclaveProcess> {
  const run = startConclave(['run', '--backend', url, '--election', election, '--id', 'runner', ...lease, ...extra, '--', ...ticker(file)]);
  await waitFor(() => readLog(file).ticks.length >= 3 || run.exit, 'CMD to start ticking', 20_000);
  expect(run.exit).toBeNull();
  return run;
}

/** Waits until the file stops growing, i.e. CMD no longer writes. */
async function quiet(file: string, forMs = 500): Promise<TickerLog> {
  let last = readLog(file).ticks.length;
  await waitFor(
    async () => {
      await delay(forMs);
      const now = readLog(file).ticks.length;
      const stable = now === last;
      last = now;
      return stable;
    },
    'CMD to stop writing',
    20_000,
  );
  return readLog(file);
}

describe('conclave run', () => {
  test('CMD runs while leading; SIGTERM stops CMD first, then releases, exit 0; the other candidate takes over', async () => {
    const election = uniqueElection('run-term');
    const file = join(dir, `${election}.log`);
    const run = await startRun(REDIS_URL, election, file, [], RELEASED_LEASE);
    const { starts } = readLog(file);
    expect(starts).toHaveLength(1);
    expect(starts[0].token).toBeGreaterThan(0);

    const other = startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', 'other', ...RELEASED_LEASE]);
    await other.waitForEvent({ event: 'leader', leaderId: 'runner' });

    run.signal('SIGTERM');
    const elected = await other.waitForEvent({ event: 'elected' }, AFTER_RELEASE_MS);
    expect(await run.waitForExit()).toEqual({ code: 0, signal: null });
    const log = await quiet(file);
    expect(isAlive(starts[0].pid)).toBe(false);
    // CMD was stopped before the lease was released: its last write precedes the hand-over.
    expect(Math.max(...log.ticks)).toBeLessThan(elected.at);
    expect(run.stderr).toBe('');
  });

  test('frozen leader (SIGSTOP): CMD stops before the lease can run out, before anyone else is elected', async () => {
    const election = uniqueElection('run-frozen');
    const file = join(dir, `${election}.log`);
    const run = await startRun(REDIS_URL, election, file);
    const other = startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', 'other', ...LEASE]);
    await other.waitForEvent({ event: 'leader', leaderId: 'runner' });

    // A GC pause, as far as anyone can tell: conclave itself is frozen, CMD and the supervisor are not.
    process.kill(run.pid, 'SIGSTOP');
    const frozenAt = Date.now();
    const elected = await other.waitForEvent({ event: 'elected' });
    const log = await quiet(file);
    const lastWrite = Math.max(...log.ticks);
    expect(lastWrite).toBeGreaterThanOrEqual(frozenAt - 100); // it did run while frozen…
    expect(lastWrite).toBeLessThan(elected.at); // …and stopped before the other was elected
    expect(log.ticks.filter((t) => t >= elected.at)).toEqual([]);
    expect(isAlive(readLog(file).starts[0].pid)).toBe(false);

    // Thawed, conclave finds its term over and does not restart CMD while the other leads.
    process.kill(run.pid, 'SIGCONT');
    await delay(1000);
    expect(readLog(file).starts).toHaveLength(1);
    run.signal('SIGTERM');
    expect(await run.waitForExit()).toEqual({ code: 0, signal: null });
  });

  test('conclave SIGKILLed: CMD dies promptly, not left running as an orphan leader', async () => {
    const election = uniqueElection('run-kill');
    const file = join(dir, `${election}.log`);
    const run = await startRun(REDIS_URL, election, file);
    const pid = readLog(file).starts[0].pid;
    expect(isAlive(pid)).toBe(true);

    run.signal('SIGKILL');
    await run.waitForExit();
    // "Promptly": the supervisor sees its channel close and SIGTERMs CMD at once; the lease (1.5 s)
    // would stop it anyway, so give it well under that plus slack for a slow machine.
    await waitFor(() => !isAlive(pid), 'CMD to die after conclave was SIGKILLed', 5_000);
    await quiet(file);
  });

  test('leadership lost (forced away): CMD is stopped, and started again on re-election with a new token', async () => {
    const election = uniqueElection('run-force');
    const file = join(dir, `${election}.log`);
    const run = await startRun(MYSQL_URL, election, file);
    const first = readLog(file).starts[0];

    // Nobody renews the forced lease (no process runs "ghost"), so after 1.5 s the runner is elected again.
    const forced = startConclave(['force', '--allow-absent', '--backend', MYSQL_URL, '--election', election, '--leader', 'ghost', '--lease-ms', '1500']);
    expect(await forced.waitForExit()).toEqual({ code: 0, signal: null });
    await waitFor(() => !isAlive(first.pid), 'the first CMD to be stopped', 15_000);
    await waitFor(() => readLog(file).starts.length >= 2, 'CMD to start again on re-election', 20_000);
    const second = readLog(file).starts[1];
    expect(second.token).toBeGreaterThan(first.token);
    expect(isAlive(second.pid)).toBe(true);

    run.signal('SIGINT');
    expect(await run.waitForExit()).toEqual({ code: 0, signal: null });
    expect(isAlive(second.pid)).toBe(false);
  });

  test('CMD exiting by itself: leadership is released and conclave exits with its code', async () => {
    const election = uniqueElection('run-exit');
    const marker = join(dir, `${election}.started`);
    const run = startConclave(['run', '--backend', REDIS_URL, '--election', election, ...RELEASED_LEASE, '--', 'sh', '-c', `touch '${marker}'; sleep 1; exit 3`]);
    await waitFor(() => existsSync(marker) || run.exit, 'CMD to start');
    const watcher = startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', 'next', ...RELEASED_LEASE]);
    expect(await run.waitForExit()).toEqual({ code: 3, signal: null });
    await watcher.waitForEvent({ event: 'elected' }, AFTER_RELEASE_MS);
  });

  test('backend hung: CMD is stopped by the lease deadline, conclave keeps campaigning and restarts CMD when it is back', async () => {
    const server = await RedisServer.start();
    try {
      const election = uniqueElection('run-hung');
      const file = join(dir, `${election}.log`);
      const run = await startRun(server.url, election, file);
      const first = readLog(file).starts[0];

      await server.pause(); // SIGSTOP: connections stay open, nothing answers
      await waitFor(() => !isAlive(first.pid), 'CMD to be stopped while the backend hangs', 15_000);
      expect(run.exit).toBeNull(); // conclave rides the outage out

      await server.resume();
      await waitFor(() => readLog(file).starts.length >= 2, 'CMD to start again once the backend answers', 30_000);
      expect(readLog(file).starts[1].token).toBeGreaterThan(first.token);
      run.signal('SIGTERM');
      expect(await run.waitForExit()).toEqual({ code: 0, signal: null });
    } finally {
      await server.stop();
    }
  });
});
