import { assertBuilt, killAll, MYSQL_URL, REDIS_URL, runConclave, startConclave, uniqueElection, expectOneErrorLine } from './cli-process';

/**
 * What is almost certainly a typo is refused or said, end to end through the built binary:
 * `force` to an id that is not a candidate, `status` of a name never used. Redis lists its
 * candidates, MySQL cannot.
 */

/** Where no lease is waited out: long enough that a process starved of the CPU still renews in time. */
const HELD_LEASE = ['--lease-ms', '10000'];
/** Where a force waits for the revoked lease to end. */
const SHORT_LEASE = ['--lease-ms', '1500'];

const BACKENDS: Array<[string, string]> = [
  ['redis', REDIS_URL],
  ['mysql', MYSQL_URL],
];

beforeAll(assertBuilt);
afterEach(killAll);

async function statusOf(url: string, election: string): Promise<Record<string, unknown>> {
  const r = await runConclave(['status', '--json', '--backend', url, '--election', election]);
  expect([r.code, r.stderr]).toEqual([0, '']);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('conclave force --leader ID that is not a candidate', () => {
  test('on a backend that lists candidates: refused with exit 2 and one line naming the id and the candidates; the leader is unchanged', async () => {
    const election = uniqueElection('force-ghost');
    const a = startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', 'cand-a', ...HELD_LEASE]);
    const elected = await a.waitForEvent({ event: 'elected' });

    const forced = await runConclave(['force', '--backend', REDIS_URL, '--election', election, '--leader', 'ghost']);
    expect(forced.code).toBe(2);
    expect(expectOneErrorLine(forced)).toMatch(
      new RegExp(`^conclave: "ghost" is not a candidate of "${election}" \\(its candidates: cand-a\\); --allow-absent forces it anyway`),
    );
    expect(await statusOf(REDIS_URL, election)).toMatchObject({ leaderId: 'cand-a', token: elected.token });
    expect(a.events().some((e) => e.event === 'revoked')).toBe(false);
  });

  test('with --allow-absent it is forced', async () => {
    const election = uniqueElection('force-absent');
    const a = startConclave(['campaign', '--json', '--backend', REDIS_URL, '--election', election, '--id', 'cand-a', ...SHORT_LEASE]);
    const elected = await a.waitForEvent({ event: 'elected' });

    // ghost's forced lease is long: status, a process started after a's revocation, must find it.
    const forced = await runConclave(['force', '--allow-absent', '--backend', REDIS_URL, '--election', election, '--leader', 'ghost', ...HELD_LEASE]);
    expect([forced.code, forced.stderr]).toEqual([0, '']);
    expect(forced.stdout).toMatch(/led by ghost \(token \d+\)/);
    await a.waitForEvent({ event: 'revoked', reason: 'lease-lost' });
    const status = await statusOf(REDIS_URL, election);
    expect(status.leaderId).toBe('ghost');
    expect(status.token as number).toBeGreaterThan(elected.token as number);
  });

  test('on a backend that cannot list candidates: one warning line that the id could not be checked, then it is forced', async () => {
    const election = uniqueElection('force-unchecked');
    // A long forced lease: the status process that looks after it must find ghost still leading.
    const forced = await runConclave(['force', '--backend', MYSQL_URL, '--election', election, '--leader', 'ghost', ...HELD_LEASE]);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toBe('conclave: mysql cannot list candidates: whether "ghost" is one could not be checked\n');
    expect(forced.stdout).toMatch(/led by ghost \(token \d+\)/);
    expect(await statusOf(MYSQL_URL, election)).toMatchObject({ leaderId: 'ghost' });
  });
});

describe.each(BACKENDS)('conclave status on %s: whether the election exists', (_name, url) => {
  test('a name never used: "exists: no" and --json "exists": false', async () => {
    const election = uniqueElection('status-typo');
    const text = await runConclave(['status', '--backend', url, '--election', election]);
    expect([text.code, text.stderr]).toEqual([0, '']);
    expect(text.stdout).toMatch(/^exists: +no \(never used on this backend: check the name\)$/m);
    expect(text.stdout).toMatch(/^leader: +\(none\)$/m);
    expect(await statusOf(url, election)).toMatchObject({ election, exists: false, leaderId: null });
  });

  test('a used election: "exists": true while it is led and still after the release, between terms', async () => {
    const election = uniqueElection('status-used');
    const a = startConclave(['campaign', '--json', '--backend', url, '--election', election, '--id', 'cand-a', ...HELD_LEASE]);
    await a.waitForEvent({ event: 'elected' });
    expect(await statusOf(url, election)).toMatchObject({ exists: true, leaderId: 'cand-a' });

    a.signal('SIGTERM');
    expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
    expect(await statusOf(url, election)).toMatchObject({ exists: true, leaderId: null });
    const text = await runConclave(['status', '--backend', url, '--election', election]);
    expect(text.stdout).toMatch(/^exists: +yes$/m);
  });
});
