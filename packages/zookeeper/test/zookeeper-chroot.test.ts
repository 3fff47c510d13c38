import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ACL, CreateMode, Id, Permission, createClient, type Client } from 'node-zookeeper-client';
import { isConclaveError } from '@conclave/core';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { zkCall } from './raw-clients';

/** A chroot in the connect string that does not exist yet: writes create it, reads create nothing. */

let server: ZookeeperServer | undefined;
let raw: Client;
const run = randomBytes(3).toString('hex');
const backends: ZookeeperBackend[] = [];
const CLI = join(__dirname, '..', '..', 'cli', 'dist', 'main.js');

beforeAll(async () => {
  server = await startZookeeperServer();
  raw = createClient(server.connect, { sessionTimeout: 3000 });
  // Authenticated as the backends below, to read the ACL of what they create.
  raw.addAuthInfo('digest', Buffer.from('alice:zksecret'));
  await new Promise<void>((resolve) => {
    raw.once('connected', () => resolve());
    raw.connect();
  });
}, 120_000);

afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

afterAll(async () => {
  raw?.close();
  await server?.close();
});

function backend(chroot: string, auth?: string): ZookeeperBackend {
  const b = new ZookeeperBackend({ connect: `${server!.connect}${chroot}`, sessionTimeoutMs: 3000, requestTimeoutMs: 3000, ...(auth ? { auth } : {}) });
  backends.push(b);
  return b;
}

const exists = (path: string) => zkCall<unknown>((cb) => raw.exists(path, cb)).then((stat) => stat !== null && stat !== undefined);

function conclave(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('reads on a missing chroot mean no leader and no candidates, and create nothing (backend and `conclave status`)', async () => {
  const chroot = `/app-${run}-read/deep`;
  const b = backend(chroot);
  await expect(b.getLeader('e')).resolves.toBeNull();
  await expect(b.candidates!.list('e')).resolves.toEqual([]);
  const status = await conclave(['status', '--backend', `zookeeper://${server!.connect}${chroot}`, '--election', 'e']);
  expect(status.stderr).toBe('');
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/^leader: +\(none\)$/m);
  expect(status.stdout).toMatch(/^candidates: +\(none\)$/m);
  expect(await exists(`/app-${run}-read`)).toBe(false);
});

test('a campaign under a missing chroot (two levels) creates it, with the backend ACL, and leads', async () => {
  const chroot = `/app-${run}-write/deep`;
  const b = backend(chroot, 'alice:zksecret');
  const result = await b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1500 });
  expect(result.role).toBe('leader');
  expect(await exists(`${chroot}/conclave/e`)).toBe(true);
  // With `auth`, only alice may use the nodes: the chroot too (CREATOR_ALL_ACL, made digest).
  const { acls } = await new Promise<{ acls: ACL[] }>((resolve, reject) =>
    raw.getACL(chroot, (err, acls) => (err ? reject(err) : resolve({ acls }))),
  );
  expect(acls.map((a) => a.id.scheme)).toEqual(['digest']);
  expect(acls[0]!.id.id).toMatch(/^alice:/);
  await expect(b.getLeader('e')).resolves.toMatchObject({ candidateId: 'a' });
});

test('a chroot that cannot be created (NO_AUTH) fails the campaign with BACKEND_MISCONFIGURED naming the chroot, without the password', async () => {
  const parent = `/locked-${run}`;
  await zkCall((cb) => raw.create(parent, Buffer.alloc(0), [new ACL(Permission.READ, new Id('world', 'anyone'))], CreateMode.PERSISTENT, cb));
  const b = backend(`${parent}/app`, 'alice:zksecret');
  const err = await b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1500 }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isConclaveError(err, 'BACKEND_MISCONFIGURED')).toBe(true);
  expect((err as Error).message).toMatch(new RegExp(`^cannot create the ZooKeeper chroot ${parent}/app: NO_AUTH`));
  expect((err as Error).message).not.toMatch(/zksecret/);
});

test('a client passed in under a missing chroot fails the campaign with BACKEND_MISCONFIGURED that says to create it, and creates nothing', async () => {
  const chroot = `/app-${run}-client`;
  const client = createClient(`${server!.connect}${chroot}`, { sessionTimeout: 3000 });
  await new Promise<void>((resolve) => {
    client.once('connected', () => resolve());
    client.connect();
  });
  const b = new ZookeeperBackend({ client, requestTimeoutMs: 3000 });
  backends.push(b);
  try {
    const err = await b.campaign({ election: 'e', candidateId: 'a', leaseMs: 1500 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isConclaveError(err, 'BACKEND_MISCONFIGURED')).toBe(true);
    expect((err as Error).message).toMatch(/^the chroot of the ZooKeeper client passed in does not exist: create it first/);
    expect(await exists(chroot)).toBe(false);
  } finally {
    client.close();
  }
});
