import { performance } from 'node:perf_hooks';
import { ConclaveError, Elector, type ConclaveErrorCode } from '@conclave/core';
import { expectRefusal as expectRefusalOf, startRejection } from '@conclave/test-harness';
import { RedisServer } from '@conclave/redis/testing';
import { freePort } from '@conclave/test-harness/tools';
import { BackendPool, uniqueName, uniquePrefix } from './helpers';

/**
 * Answers that no retry can change are told apart from an unreachable server: refused credentials
 * are BACKEND_AUTH, a missing ACL permission is BACKEND_MISCONFIGURED, both within 2 s of the
 * call, naming the server's answer once and never the password.
 * The 2 s bound tells "at once" from "after waiting": a refusal is one round trip, while a
 * candidate retrying, or a call waiting out its timeout, takes at least the 3 s lease or request
 * timeout these tests use; 2 s leaves a loaded machine most of a second per round trip.
 */

const PASSWORD = 'conclave-test-s3cret';
const SERVER_ARGS = [
  '--requirepass', PASSWORD,
  // Logs in and may run every command, on no key this backend uses.
  '--user', 'keyless', 'on', '>keyless-pw', '~elsewhere:*', '&*', '+@all',
  // Logs in and may touch every key, but not run scripts.
  '--user', 'noscripts', 'on', '>noscripts-pw', '~*', '&*', '+@all', '-evalsha', '-eval',
  // Runs scripts on every key, but a command they call is refused inside the script.
  '--user', 'nozadd', 'on', '>nozadd-pw', '~*', '&*', '+@all', '-zadd',
];

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start({ args: SERVER_ARGS });
}, 20_000);
afterAll(() => server?.stop());

const pool = new BackendPool();
afterEach(() => pool.closeAll());

function authority(userInfo: string): string {
  return `redis://${userInfo}127.0.0.1:${server.port}`;
}

/** How a first campaign on a new backend ends, and how long it took. */
async function firstCampaign(options: { url: string } | { urls: string[] }): Promise<{ err: unknown; ms: number; election: string }> {
  const backend = pool.redis({ ...options, keyPrefix: uniquePrefix() });
  const election = uniqueName('perm');
  const started = performance.now();
  const err = await backend.campaign({ election, candidateId: 'a', leaseMs: 10_000 }).then(
    () => new Error('the campaign resolved'),
    (e: unknown) => e,
  );
  return { err, ms: performance.now() - started, election };
}

function expectRefusal(err: unknown, code: ConclaveErrorCode, names: RegExp): void {
  expectRefusalOf(err, code, names, [PASSWORD, 'wrong-pw', 'keyless-pw', 'noscripts-pw', 'nozadd-pw']);
  expect((err as ConclaveError).message).not.toContain('(last error: ');
}

describe('Redis: refused credentials are BACKEND_AUTH', () => {
  test.each([
    ['a wrong password', ':wrong-pw@', /WRONGPASS/],
    ['an unknown user', 'nobody:wrong-pw@', /WRONGPASS/],
    ['no password on a server that requires one', '', /NOAUTH/],
  ])('%s: campaign rejects with BACKEND_AUTH within 2 s, naming the refusal once, never the password', async (_what, userInfo, names) => {
    const { err, ms } = await firstCampaign({ url: authority(userInfo) });
    expectRefusal(err, 'BACKEND_AUTH', names);
    expect(ms).toBeLessThan(2000);
  });

  test('while ioredis reconnects after a refused password, later calls (getLeader, campaign) are BACKEND_AUTH too, not "not connected"', async () => {
    const backend = pool.redis({ url: authority(':wrong-pw@'), keyPrefix: uniquePrefix() });
    const election = uniqueName('perm');
    const codes: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await backend.getLeader(election).catch((e: unknown) => (e as ConclaveError).code));
      codes.push(await backend.campaign({ election, candidateId: 'a', leaseMs: 10_000 }).catch((e: unknown) => (e as ConclaveError).code));
    }
    expect(codes).toEqual(Array(6).fill('BACKEND_AUTH'));
  });

  test('quorum: a master that refuses the password is reported over masters that cannot be reached', async () => {
    const dead = [await freePort(), await freePort()];
    const urls = [`redis://:wrong-pw@127.0.0.1:${dead[0]}`, authority(':wrong-pw@'), `redis://:wrong-pw@127.0.0.1:${dead[1]}`];
    const { err, ms } = await firstCampaign({ urls });
    expectRefusal(err, 'BACKEND_AUTH', /WRONGPASS/);
    expect(ms).toBeLessThan(2000);
  });
});

describe('Redis: a missing ACL permission is BACKEND_MISCONFIGURED', () => {
  test.each([
    ['on the keys', 'keyless:keyless-pw@', /NOPERM/],
    ['to run scripts', 'noscripts:noscripts-pw@', /NOPERM/],
    ['for a command the scripts call', 'nozadd:nozadd-pw@', /(NOPERM|can't run this command)/],
  ])('an ACL user without permission %s: campaign rejects with BACKEND_MISCONFIGURED within 2 s', async (_what, userInfo, names) => {
    const { err, ms } = await firstCampaign({ url: authority(userInfo) });
    expectRefusal(err, 'BACKEND_MISCONFIGURED', names);
    expect(ms).toBeLessThan(2000);
  });
});

describe('Redis: an unreachable server stays BACKEND_UNAVAILABLE', () => {
  test('a refused connection is BACKEND_UNAVAILABLE and its message names the cause once, call after call', async () => {
    const backend = pool.redis({ url: `redis://:wrong-pw@127.0.0.1:${await freePort()}`, keyPrefix: uniquePrefix() });
    const election = uniqueName('perm');
    for (let i = 0; i < 4; i++) {
      const err = await backend.campaign({ election, candidateId: 'a', leaseMs: 10_000 }).then(
        () => new Error('the campaign resolved'),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConclaveError);
      const { code, message } = err as ConclaveError;

      expect(code).toBe('BACKEND_UNAVAILABLE');
      expect(message.match(/ECONNREFUSED/g) ?? []).toHaveLength(1);
      expect(message.match(/\(last error: /g) ?? []).toHaveLength(1);
      expect(message).not.toContain('wrong-pw');
      await new Promise((r) => setTimeout(r, 150));
    }
  });
});

describe('Redis: through Elector.start()', () => {
  test.each([
    ['a wrong password', 'BACKEND_AUTH', /WRONGPASS/, ':wrong-pw@'],
    ['a user that may touch none of the keys', 'BACKEND_MISCONFIGURED', /NOPERM/, 'keyless:keyless-pw@'],
  ] as const)('%s: start() rejects with %s within 2 s and leaves the Elector stopped', async (_what, code, names, userInfo) => {
    const backend = pool.redis({ url: authority(userInfo), keyPrefix: uniquePrefix() });
    const e = new Elector({ backend, election: uniqueName('perm'), candidateId: 'a', leaseMs: 3000, logger: null });
    const { err, ms } = await startRejection(e);
    expectRefusal(err, code, names);
    expect(ms).toBeLessThan(2000);
    expect(e.state.role).toBe('stopped');
  });
});
