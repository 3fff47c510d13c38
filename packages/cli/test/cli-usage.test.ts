import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, expectOneErrorLine, killAll, REDIS_URL, runConclave, startConclave, uniqueElection } from './cli-process';

/** The command as a user meets it first: help, version, mistakes, the demo. No server needed. */

beforeAll(assertBuilt);
afterEach(killAll);

const COMMANDS = ['campaign', 'run', 'status', 'watch', 'force', 'clear', 'migrate', 'demo'];

describe('conclave help and version', () => {
  test('--version prints the package version', async () => {
    const r = await runConclave(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('--help lists every command and the exit codes', async () => {
    const r = await runConclave(['--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toContain(c);
    expect(r.stdout).toMatch(/Exit codes/);
  });

  test.each(COMMANDS)('%s --help shows its usage and exits 0', async (command) => {
    const r = await runConclave([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: conclave ${command}`);
    expect(r.stderr).toBe('');
  });

  test('no command at all: the help on stderr, exit 2', async () => {
    const r = await runConclave([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: conclave');
  });
});

describe('conclave usage errors: one line on stderr, exit 2', () => {
  const election = uniqueElection('usage');
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['an unknown flag', ['campaign', '--backend', REDIS_URL, '--election', election, '--bogus'], /unknown option --bogus/],
    ['a flag of another command', ['status', '--backend', REDIS_URL, '--election', election, '--leader', 'x'], /unknown option --leader/],
    ['a missing --backend', ['status', '--election', election], /needs --backend/],
    ['a missing --election', ['campaign', '--backend', REDIS_URL], /needs --election/],
    ['a flag without its value', ['status', '--election', election, '--backend'], /--backend needs a value/],
    ['force without --leader', ['force', '--backend', REDIS_URL, '--election', election], /needs --leader/],
    ['run without a command', ['run', '--backend', REDIS_URL, '--election', election], /needs a command/],
    ['run with the command not after --', ['run', '--backend', REDIS_URL, '--election', election, 'sleep', '1'], /unexpected argument "sleep"/],
    ['a stray argument', ['clear', '--backend', REDIS_URL, '--election', election, 'now'], /unexpected argument "now"/],
    ['a non-numeric --lease-ms', ['campaign', '--backend', REDIS_URL, '--election', election, '--lease-ms', '1.5s'], /--lease-ms must be a positive whole number/],
    ['a bad --log-level', ['status', '--backend', REDIS_URL, '--election', election, '--log-level', 'loud'], /--log-level must be one of/],
    ['an unknown URL scheme', ['status', '--backend', 'couchdb://localhost/db', '--election', election], /unknown backend URL/],
    ['a URL that is no URL', ['status', '--backend', 'localhost:6379', '--election', election], /unknown backend URL/],
    ['settings on memory:', ['status', '--backend', 'memory://x', '--election', election], /memory backend takes no settings/],
    ['an unknown ZooKeeper URL parameter', ['status', '--backend', 'zookeeper://127.0.0.1:2181?foo=1', '--election', election], /unknown parameter "foo"/],
    ['a bad election name', ['status', '--backend', REDIS_URL, '--election', 'a/b c'], /election name/],
    ['a bad candidate id', ['force', '--backend', REDIS_URL, '--election', election, '--leader', 'x'.repeat(300)], /candidate id/i],
    ['inconsistent lease options', ['campaign', '--backend', 'memory:', '--election', election, '--lease-ms', '40'], /--lease-ms 40 is too short/],
    ['--wait without --once', ['run', '--backend', 'memory:', '--election', election, '--wait', '5s', '--', 'true'], /--wait goes with --once/],
    ['a --hold-at-least without a unit', ['run', '--once', '--backend', 'memory:', '--election', election, '--hold-at-least', '30', '--', 'true'], /--hold-at-least needs a unit, as in 30s/],
    ['a --wait that is no duration', ['run', '--once', '--backend', 'memory:', '--election', election, '--wait', 'soon', '--', 'true'], /--wait must be a duration/],
    ['a --value over 1024 UTF-8 bytes', ['campaign', '--backend', 'memory:', '--election', election, '--value', 'é'.repeat(513)], /--value is 1026 UTF-8 bytes long; the limit is 1024/],
    ['--value on status', ['status', '--backend', 'memory:', '--election', election, '--value', 'x'], /unknown option --value/],
    ['--once on campaign', ['campaign', '--backend', 'memory:', '--election', election, '--once'], /unknown option --once/],
    ['migrate without a subcommand', ['migrate', '--from', REDIS_URL, '--to', 'memory:', '--election', election], /"migrate" needs a subcommand/],
    ['an unknown migrate subcommand', ['migrate', 'start', '--from', REDIS_URL, '--to', 'memory:', '--election', election], /unknown migrate subcommand "start"/],
    ['migrate status without --from', ['migrate', 'status', '--to', 'memory:', '--election', election], /needs --from URL/],
    ['migrate status without --to', ['migrate', 'status', '--from', REDIS_URL, '--election', election], /needs --to URL/],
    ['migrate status without --election', ['migrate', 'status', '--from', REDIS_URL, '--to', 'memory:'], /needs --election NAME/],
    ['migrate status with --backend', ['migrate', 'status', '--backend', REDIS_URL, '--from', REDIS_URL, '--to', 'memory:', '--election', election], /unknown option --backend/],
    ['migrate status with a bad election name', ['migrate', 'status', '--from', REDIS_URL, '--to', 'memory:', '--election', 'a/b c'], /election name/],
    ['migrate status with the same URL twice', ['migrate', 'status', '--from', 'mysql://root@127.0.0.1:1/test', '--to', 'mariadb://root@127.0.0.1:1/test/', '--election', election], /--from and --to name the same backend/],
    ['migrate status with a migration URL as --from', ['migrate', 'status', '--from', 'migrate:dual?from=memory%3A&to=redis%3A%2F%2F127.0.0.1%3A1', '--to', REDIS_URL, '--election', election], /--from must be a plain backend URL/],
    ['migrate status with a migration URL as --to', ['migrate', 'status', '--from', REDIS_URL, '--to', 'MIGRATE:to-only?from=memory%3A&to=redis%3A%2F%2F127.0.0.1%3A1', '--election', election], /--to must be a plain backend URL/],
    ['migrate status with an unknown URL scheme', ['migrate', 'status', '--from', REDIS_URL, '--to', 'couchdb://localhost/db', '--election', election], /unknown backend URL/],
    ['a grace period longer than the lease allows', ['run', '--backend', 'memory:', '--election', election, '--lease-ms', '1500', '--grace-ms', '5000', '--', 'true'], /--grace-ms 5000 is too long/],
  ];

  test.each(cases)('%s', async (_what, args, message) => {
    const r = await runConclave(args);
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r)).toMatch(message);
  });
});

describe('conclave migrate status: passwords never appear', () => {
  test('the same URL twice is reported with the password hidden', async () => {
    const url = 'mysql://app:hunter2-secret@127.0.0.1:1/test';
    const r = await runConclave(['migrate', 'status', '--from', url, '--to', url, '--election', uniqueElection()]);
    expect(r.code).toBe(2);
    const line = expectOneErrorLine(r);
    expect(line).toContain('mysql://app:***@127.0.0.1:1/test');
    expect(line).not.toContain('hunter2-secret');
  });

  test('an unknown scheme in --to is reported with the password hidden', async () => {
    const r = await runConclave(['migrate', 'status', '--from', 'memory:', '--to', 'couchdb://app:hunter2-secret@db/x', '--election', uniqueElection()]);
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r)).not.toContain('hunter2-secret');
    });
  });

describe('conclave usage errors say what the user can act on', () => {
  const election = uniqueElection('usage');

  test('an unknown command close to a known one gets a suggestion: statuz → did you mean status?', async () => {
    const r = await runConclave(['statuz', '--backend', 'memory:', '--election', election]);
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r)).toMatch(/unknown command "statuz"; did you mean status\?/);
    const far = await runConclave(['frobnicate']);
    expect(expectOneErrorLine(far)).not.toMatch(/did you mean/);
  });

  test.each([
    ['Redis', 'redis://:hun%ZZter@127.0.0.1:6379'],
    ['Redis quorum', 'redis://app:hun%ZZter@127.0.0.1:6379,127.0.0.1:6380,127.0.0.1:6381'],
    ['ZooKeeper', 'zookeeper://app:hun%ZZter@127.0.0.1:2181'],
    ['MySQL', 'mysql://root:hun%ZZter@127.0.0.1:3306/test'],
  ])('a %s URL with bad percent-encoding in its password is a usage error that never shows the password', async (_what, url) => {
    const r = await runConclave(['status', '--backend', url, '--election', election]);
    expect(r.code).toBe(2);
    const line = expectOneErrorLine(r);
    expect(line).toMatch(/percent-encoding/);
    expect(line).not.toMatch(/hun|ZZter/);
  });

  test('--lease-ms too short names --lease-ms and the shortest it accepts, not the library options', async () => {
    const r = await runConclave(['campaign', '--backend', 'memory:', '--election', election, '--lease-ms', '10']);
    expect(r.code).toBe(2);
    const line = expectOneErrorLine(r);
    expect(line).toMatch(/--lease-ms 10 is too short: at least (\d+) ms/);
    expect(line).not.toMatch(/safetyMarginMs|renewMs|leaseMs/);
    const minimum = /at least (\d+) ms/.exec(line)![1]!;
    const below = await runConclave(['run', '--backend', 'memory:', '--election', election, '--lease-ms', String(Number(minimum) - 1), '--', 'true']);
    expect(expectOneErrorLine(below)).toMatch(new RegExp(`at least ${minimum} ms`));
    const enough = startConclave(['campaign', '--json', '--backend', 'memory:', '--election', election, '--lease-ms', minimum]);
    await enough.waitForEvent({ event: 'elected' });
    enough.signal('SIGTERM');
    expect(await enough.waitForExit()).toEqual({ code: 0, signal: null });
  });
});

describe('conclave run: a CMD that cannot start fails before campaigning', () => {
  // The backend is unreachable: reaching it would be exit 1, so 127/126 proves the check came first.
  const unreachable = ['--backend', 'redis://127.0.0.1:1', '--election', uniqueElection('cmd')];
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'conclave-cmd-'));
    writeFileSync(join(dir, 'not-executable'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a name not on PATH: exit 127, one clear line', async () => {
    const r = await runConclave(['run', ...unreachable, '--', 'no-such-command-conclave-test', '--flag']);
    expect(r.code).toBe(127);
    expect(expectOneErrorLine(r)).toMatch(/cannot run "no-such-command-conclave-test": command not found/);
  });

  test('a name whose only match on PATH is not executable: exit 127', async () => {
    const p = startConclave(['run', ...unreachable, '--', 'not-executable'], { PATH: `${dir}:${process.env.PATH ?? ''}` });
    expect(await p.waitForExit()).toEqual({ code: 127, signal: null });
    expect(p.stderr).toMatch(/^conclave: cannot run "not-executable": command not found/);
  });

  test('a path that does not exist: exit 127; a file that is not executable: exit 126', async () => {
    const missing = await runConclave(['run', ...unreachable, '--', join(dir, 'missing')]);
    expect(missing.code).toBe(127);
    expect(expectOneErrorLine(missing)).toMatch(/no such file/);
    const denied = await runConclave(['run', ...unreachable, '--', join(dir, 'not-executable')]);
    expect(denied.code).toBe(126);
    expect(expectOneErrorLine(denied)).toMatch(/not executable/);
  });
});

describe('conclave backend errors: one line on stderr, exit 1', () => {
  test('status against a server that is not there', async () => {
    const r = await runConclave(['status', '--backend', 'redis://127.0.0.1:1', '--election', uniqueElection()]);
    expect(r.code).toBe(1);
    expect(expectOneErrorLine(r)).toMatch(/ECONNREFUSED|connect|unavailable/i);
  });

  test('campaign against a server that is not there fails at start-up instead of retrying forever', async () => {
    const r = await runConclave(['campaign', '--backend', 'redis://127.0.0.1:1', '--election', uniqueElection()]);
    expect(r.code).toBe(1);
    expectOneErrorLine(r);
  });

  test('run against a server that is not there never starts the command', async () => {
    const r = await runConclave(['run', '--backend', 'mysql://root@127.0.0.1:1/test', '--election', uniqueElection(), '--', 'sh', '-c', 'echo started']);
    expect(r.code).toBe(1);
    expectOneErrorLine(r);
  });
});

describe('conclave on the in-memory backend', () => {
  test('demo runs with no server and exits by itself with 0', async () => {
    const r = await runConclave(['demo'], 30_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/graceful hand-over: [\d.]+ ms/);
    expect(r.stdout).toMatch(/crash take-over: +[\d.]+ ms/);
  });

  test('status --json on memory: reports no leader and the (empty) candidate list', async () => {
    const election = uniqueElection();
    const r = await runConclave(['status', '--backend', 'memory:', '--election', election, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      election,
      exists: false,
      leaderId: null,
      token: null,
      value: null,
      since: null,
      renewedAt: null,
      leaseEndsAt: null,
      transitions: null,
      candidates: [],
    });
  });

  test('run: a command that is not found exits 127 with one line', async () => {
    const r = await runConclave(['run', '--backend', 'memory:', '--election', uniqueElection(), '--', 'no-such-command-conclave-test']);
    expect(r.code).toBe(127);
    expect(expectOneErrorLine(r)).toMatch(/command not found/);
  });

  test('run: when the command exits by itself, conclave exits with its code', async () => {
    const r = await runConclave(['run', '--backend', 'memory:', '--election', uniqueElection(), '--', 'sh', '-c', 'echo "token=$CONCLAVE_TOKEN"; exit 7']);
    expect(r.code).toBe(7);
    expect(r.stdout).toMatch(/^token=\d+$/m);
  });

  test('run --once: the only candidate runs CMD once and exits with its code', async () => {
    const r = await runConclave(['run', '--once', '--backend', 'memory:', '--election', uniqueElection(), '--', 'sh', '-c', 'echo ran; exit 4']);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('ran\n');
  });

  test('run: a command killed by a signal gives 128 + the signal number', async () => {
    const r = await runConclave(['run', '--backend', 'memory:', '--election', uniqueElection(), '--', 'sh', '-c', 'kill -9 $$']);
    expect(r.code).toBe(137);
  });
});
