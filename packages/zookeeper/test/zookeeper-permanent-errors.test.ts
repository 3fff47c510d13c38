import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { ACL, CreateMode, Id, Permission, createClient } from 'node-zookeeper-client';
import { Elector, type ConclaveErrorCode } from '@conclave/core';
import { expectRefusal as expectRefusalOf, startRejection } from '@conclave/test-harness';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { BackendPool } from './zookeeper-fixtures';
import { RawClients, zkCall } from './raw-clients';

/**
 * Answers that no retry can change are told apart from an unreachable server: a missing
 * permission (NO_AUTH) is BACKEND_MISCONFIGURED, refused credentials (AUTH_FAILED) are
 * BACKEND_AUTH, within 2 s of the campaign, naming the server's answer once and never the
 * password.
 * The 2 s bound tells "at once" from "after waiting": a refusal is one round trip, while a
 * candidate retrying, or a call waiting out its timeout, takes at least the 3 s lease or request
 * timeout these tests use; 2 s leaves a loaded machine most of a second per round trip.
 */

const run = randomBytes(3).toString('hex');
const PASSWORD = 'zk-right-pw';
const WRONG = 'zk-wrong-pw';

let server: ZookeeperServer | undefined;
/** A server that knows no digest credentials: it answers every `addAuthInfo('digest', …)` with AUTH_FAILED. */
let noDigest: ZookeeperServer | undefined;
beforeAll(async () => {
  [server, noDigest] = await Promise.all([startZookeeperServer(), startZookeeperServer({ config: ['DigestAuthenticationProvider.enabled=false'] })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([server?.close(), noDigest?.close()]);
});

const pool = new BackendPool(() => server!.connect);
const raw = new RawClients(() => server!.connect);
const clients: Array<{ close(): void }> = [];
const onClients: ZookeeperBackend[] = [];
afterEach(async () => {
  await Promise.all(onClients.splice(0).map((b) => b.close()));
  await pool.closeAll();
  raw.closeAll();
  for (const c of clients.splice(0)) c.close();
});

/** How one campaign ends, and how long it took from the call. */
async function campaign(backend: ZookeeperBackend, election = 'e'): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  const err = await backend.campaign({ election, candidateId: 'a', leaseMs: 3000 }).then(
    () => new Error('the campaign resolved'),
    (e: unknown) => e,
  );
  return { err, ms: performance.now() - started };
}

function expectRefusal(err: unknown, code: ConclaveErrorCode, names: RegExp): void {
  expectRefusalOf(err, code, names, [PASSWORD, WRONG]);
}

describe('ZooKeeper: a missing permission (NO_AUTH) is BACKEND_MISCONFIGURED', () => {
  test('a root under a parent whose ACL only lets this session read: campaign rejects with BACKEND_MISCONFIGURED within 2 s', async () => {
    const parent = `/locked-${run}`;
    const admin = await raw.open();
    await zkCall((cb) => admin.create(parent, Buffer.alloc(0), [new ACL(Permission.READ, new Id('world', 'anyone'))], CreateMode.PERSISTENT, cb));
    const { err, ms } = await campaign(pool.direct({ root: `${parent}/conclave` }));
    expectRefusal(err, 'BACKEND_MISCONFIGURED', /NO_AUTH/);
    expect(ms).toBeLessThan(2000);
  });

  test('digest credentials other than those of the nodes\' creator (a wrong password): campaign rejects with BACKEND_MISCONFIGURED, without the password', async () => {
    const root = `/creator-${run}`;
    const owner = pool.direct({ root, auth: `alice:${PASSWORD}` });
    await expect(owner.campaign({ election: 'e', candidateId: 'owner', leaseMs: 3000 })).resolves.toMatchObject({ role: 'leader' });
    const { err, ms } = await campaign(pool.direct({ root, auth: `alice:${WRONG}` }));
    expectRefusal(err, 'BACKEND_MISCONFIGURED', /NO_AUTH/);
    expect(ms).toBeLessThan(2000);
  });
});

describe('ZooKeeper: refused credentials (AUTH_FAILED) are BACKEND_AUTH', () => {
  test('a server that refuses the credentials: campaign rejects with BACKEND_AUTH within 2 s, and so does the next one', async () => {
    const backend = pool.direct({ connect: noDigest!.connect, auth: `alice:${PASSWORD}` });
    for (let i = 0; i < 2; i++) {
      const { err, ms } = await campaign(backend);
      expectRefusal(err, 'BACKEND_AUTH', /AUTH_FAILED/);
      expect(ms).toBeLessThan(2000);
    }
  });

  test('a client passed in whose credentials the server refuses: campaign rejects with BACKEND_AUTH within 2 s, and so does the next one', async () => {
    const client = createClient(noDigest!.connect, { sessionTimeout: 3000 });
    clients.push(client);
    client.addAuthInfo('digest', Buffer.from(`alice:${PASSWORD}`));
    client.connect();
    const backend = new ZookeeperBackend({ client, requestTimeoutMs: 3000 });
    onClients.push(backend);
    for (let i = 0; i < 2; i++) {
      const { err, ms } = await campaign(backend);
      expectRefusal(err, 'BACKEND_AUTH', /AUTH_FAILED/);
      expect(ms).toBeLessThan(2000);
    }
  });
});

describe('ZooKeeper: through Elector.start()', () => {
  test.each([
    ['refused credentials', 'BACKEND_AUTH', /AUTH_FAILED/, () => pool.direct({ connect: noDigest!.connect, auth: `alice:${PASSWORD}` })],
    ['a missing permission', 'BACKEND_MISCONFIGURED', /NO_AUTH/, () => pool.direct({ root: `/locked-elector-${run}/conclave` })],
  ] as const)('%s: start() rejects with %s within 2 s and leaves the Elector stopped', async (_what, code, names, backend) => {
    if (code === 'BACKEND_MISCONFIGURED') {
      const admin = await raw.open();
      await zkCall((cb) => admin.create(`/locked-elector-${run}`, Buffer.alloc(0), [new ACL(Permission.READ, new Id('world', 'anyone'))], CreateMode.PERSISTENT, cb));
    }
    const e = new Elector({ backend: backend(), election: 'e', candidateId: 'a', leaseMs: 3000, logger: null });
    const { err, ms } = await startRejection(e);
    expectRefusal(err, code, names);
    expect(ms).toBeLessThan(2000);
    expect(e.state.role).toBe('stopped');
  });
});
