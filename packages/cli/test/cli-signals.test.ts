import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conclave/test-harness';
import { assertBuilt, isAlive, killAll, REDIS_URL, runConclave, startConclave, uniqueElection } from './cli-process';

/**
 * How the command ends when its terminal or its reader goes away: SIGHUP and a closed stdout
 * (EPIPE, as with `| head -1`) are clean shutdowns that release the lease, like SIGTERM.
 * The lease is long (10 s), so another candidate elected within a few seconds proves a release.
 */

const LONG_LEASE = ['--lease-ms', '10000'];
const RELEASED_WITHIN_MS = 5000;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'conclave-signals-'));
});
afterEach(killAll);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function campaign(election: string, id: string) {
  return startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', id, ...LONG_LEASE]);
}

describe('conclave and a closed stdout', () => {
  test('campaign … | head -1: a signal after the reader left exits 0, not 143 or 130', async () => {
    const election = uniqueElection('epipe-signal');
    const a = campaign(election, 'cand-a');
    await a.waitForEvent({ event: 'elected' });
    // The reader goes away, as `head -1` does after its line.
    a.child.stdout!.destroy();
    const b = campaign(election, 'cand-b');
    await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });
    a.signal('SIGTERM'); // its shutdown lines now hit EPIPE
    expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
    const elected = await b.waitForEvent({ event: 'elected' }, RELEASED_WITHIN_MS);
    expect(elected.leaderId).toBe('cand-b');
  });

  test('campaign whose reader left: the next line it writes (EPIPE) shuts it down, releasing the lease, exit 0', async () => {
    const election = uniqueElection('epipe-write');
    const a = campaign(election, 'cand-a');
    await a.waitForEvent({ event: 'elected' });
    const b = campaign(election, 'cand-b');
    await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });
    b.child.stdout!.destroy();
    // a leaves; b is elected and writes it to a closed pipe.
    a.signal('SIGTERM');
    expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
    expect(await b.waitForExit(20_000)).toEqual({ code: 0, signal: null });
    expect(b.stderr).toBe('');
    // b released on its way out: the election is free at once, not after its 10 s lease.
    const status = await runConclave(['status', '--json', '--backend', REDIS_URL, '--election', election]);
    expect(JSON.parse(status.stdout)).toMatchObject({ leaderId: null });
  });
});

describe('conclave and SIGHUP (terminal closed)', () => {
  test('campaign: SIGHUP steps down and releases like SIGTERM, exit 0', async () => {
    const election = uniqueElection('hup-campaign');
    const a = campaign(election, 'cand-a');
    const first = await a.waitForEvent({ event: 'elected' });
    const b = campaign(election, 'cand-b');
    await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });
    a.signal('SIGHUP');
    expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
    expect(a.events().at(-2)).toMatchObject({ event: 'revoked', reason: 'stopped', token: first.token });
    expect(a.events().at(-1)).toMatchObject({ event: 'stopped', reason: 'SIGHUP' });
    await b.waitForEvent({ event: 'elected' }, RELEASED_WITHIN_MS);
  });

  test('run: SIGHUP stops CMD, then releases, exit 0', async () => {
    const election = uniqueElection('hup-run');
    const marker = join(dir, `${election}.pid`);
    const run = startConclave([
      'run', '--backend', REDIS_URL, '--election', election, '--id', 'runner', ...LONG_LEASE,
      '--', 'sh', '-c', `echo $$ > '${marker}'; exec sleep 60`,
    ]);
    await waitFor(() => existsSync(marker) || run.exit, 'CMD to start', 20_000);
    const b = campaign(election, 'cand-b');
    await b.waitForEvent({ event: 'leader', leaderId: 'runner' });
    run.signal('SIGHUP');
    expect(await run.waitForExit()).toEqual({ code: 0, signal: null });
    await b.waitForEvent({ event: 'elected' }, RELEASED_WITHIN_MS);
    const pid = Number(readFileSync(marker, 'utf8'));
    expect(isAlive(pid)).toBe(false);
  });
});
