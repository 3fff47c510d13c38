import { performance } from 'node:perf_hooks';
import { Etcd3 } from 'etcd3';
import { Elector, type ConclaveErrorCode } from '@conclave/core';
import { expectRefusal as expectRefusalOf, startRejection } from '@conclave/test-harness';
import { EtcdBackend } from '@conclave/etcd';
import { privateEtcd } from './etcd-test-env';

/**
 * Answers that no retry can change are told apart from an unreachable cluster: refused or missing
 * credentials are BACKEND_AUTH, roles that do not cover the election's keys (or credentials given
 * to a cluster without authentication) are BACKEND_MISCONFIGURED, within 2 s of the campaign,
 * naming etcd's answer once and never the password.
 * The 2 s bound tells "at once" from "after waiting": a refusal is one round trip, while a
 * candidate retrying, or a call waiting out its timeout, takes at least the 3 s lease or request
 * timeout these tests use; 2 s leaves a loaded machine most of a second per round trip.
 */

const ROOT_PASSWORD = 'etcd-root-pw';
const PASSWORDS = [ROOT_PASSWORD, 'etcd-wrong-pw', 'etcd-limited-pw', 'etcd-granted-pw'];

const secured = privateEtcd({ rootPassword: ROOT_PASSWORD });
const open = privateEtcd();

beforeAll(async () => {
  const root = new Etcd3({ hosts: secured.hosts, auth: { username: 'root', password: ROOT_PASSWORD } });
  try {
    // `limited` may use keys under elsewhere/ only; `granted` the backend's default prefix.
    for (const [user, prefix, password] of [
      ['limited', 'elsewhere/', 'etcd-limited-pw'],
      ['granted', 'conclave/', 'etcd-granted-pw'],
    ] as const) {
      await root.role(user).create();
      await root.role(user).grant({ permission: 'Readwrite', range: root.range({ prefix }) });
      await root.user(user).create(password);
      await root.user(user).addRole(user);
    }
  } finally {
    root.close();
  }
});

const backends: EtcdBackend[] = [];
afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

function backend(hosts: string[], auth?: { username: string; password: string }): EtcdBackend {
  const b = new EtcdBackend({ hosts, requestTimeoutMs: 3000, ...(auth ? { auth } : {}) });
  backends.push(b);
  return b;
}

/** How one campaign ends, and how long it took from the call. */
async function campaign(b: EtcdBackend): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  const err = await b.campaign({ election: 'e', candidateId: 'a', leaseMs: 2000 }).then(
    () => new Error('the campaign resolved'),
    (e: unknown) => e,
  );
  return { err, ms: performance.now() - started };
}

function expectRefusal(err: unknown, code: ConclaveErrorCode, names: RegExp): void {
  expectRefusalOf(err, code, names, PASSWORDS);
}

describe('etcd: refused or missing credentials are BACKEND_AUTH', () => {
  test.each([
    ['a wrong password', { username: 'root', password: 'etcd-wrong-pw' }, /authentication failed/],
    ['an unknown user', { username: 'nobody', password: 'etcd-wrong-pw' }, /authentication failed/],
    ['no credentials on a cluster with authentication on', undefined, /user name is empty/],
  ])('%s: campaign rejects with BACKEND_AUTH within 2 s, naming the refusal once, never the password', async (_what, auth, names) => {
    const b = backend(secured.hosts, auth);
    const { err, ms } = await campaign(b);
    expectRefusal(err, 'BACKEND_AUTH', names);
    expect(ms).toBeLessThan(2000);
    // The other calls say so too.
    expectRefusal(await b.getLeader('e').then(() => null, (e: unknown) => e), 'BACKEND_AUTH', names);
  });
});

describe('etcd: a configuration that can never work is BACKEND_MISCONFIGURED', () => {
  test('a user whose roles do not cover the key prefix: campaign rejects with BACKEND_MISCONFIGURED within 2 s', async () => {
    const { err, ms } = await campaign(backend(secured.hosts, { username: 'limited', password: 'etcd-limited-pw' }));
    expectRefusal(err, 'BACKEND_MISCONFIGURED', /permission denied/);
    expect(ms).toBeLessThan(2000);
  });

  test('a user whose role covers the key prefix leads (the refusal above is about the prefix)', async () => {
    const b = backend(secured.hosts, { username: 'granted', password: 'etcd-granted-pw' });
    await expect(b.campaign({ election: 'e', candidateId: 'a', leaseMs: 2000 })).resolves.toMatchObject({ role: 'leader' });
  });

  test('credentials given to a cluster without authentication: campaign rejects with BACKEND_MISCONFIGURED within 2 s', async () => {
    const { err, ms } = await campaign(backend(open.hosts, { username: 'root', password: ROOT_PASSWORD }));
    expectRefusal(err, 'BACKEND_MISCONFIGURED', /authentication is not enabled/);
    expect(ms).toBeLessThan(2000);
  });
});

describe('etcd: through Elector.start()', () => {
  test.each([
    ['a wrong password', 'BACKEND_AUTH', /authentication failed/, { username: 'root', password: 'etcd-wrong-pw' }],
    ['roles that do not cover the key prefix', 'BACKEND_MISCONFIGURED', /permission denied/, { username: 'limited', password: 'etcd-limited-pw' }],
  ] as const)('%s: start() rejects with %s within 2 s and leaves the Elector stopped', async (_what, code, names, auth) => {
    const e = new Elector({ backend: backend(secured.hosts, auth), election: 'e', candidateId: 'a', leaseMs: 3000, logger: null });
    const { err, ms } = await startRejection(e);
    expectRefusal(err, code, names);
    expect(ms).toBeLessThan(2000);
    expect(e.state.role).toBe('stopped');
  });
});
