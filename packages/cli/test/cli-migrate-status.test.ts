import { Elector, type ElectionBackend } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';
import { MysqlBackend } from '@conclave/mysql';
import { ZookeeperBackend } from '@conclave/zookeeper';
import { waitFor } from '@conclave/test-harness';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';
import { assertBuilt, expectOneErrorLine, killAll, MYSQL_URL, runConclave, uniqueElection } from './cli-process';

/**
 * `conclave migrate status` through the built binary, on a private ZooKeeper (from) and the shared
 * MariaDB (to), while candidates of each kind run in this process as a rollout would run them.
 */

let server: ZookeeperServer | undefined;
const electors: Elector[] = [];
const backends: ElectionBackend[] = [];

/** Generous: the machine may be slow; the private server grants sessions up to 4 s. */
const LEASE_MS = 2000;
const SESSION_TIMEOUT_MS = 3000;

beforeAll(async () => {
  assertBuilt();
  server = await startZookeeperServer();
}, 90_000);

afterEach(async () => {
  await killAll();
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await Promise.all(backends.splice(0).map((b) => b.close().catch(() => undefined)));
});

afterAll(async () => {
  await server?.close();
});

const zookeeperUrl = () => `zookeeper://${server!.connect}`;

function zookeeper(): ZookeeperBackend {
  return new ZookeeperBackend({ connect: server!.connect, sessionTimeoutMs: SESSION_TIMEOUT_MS });
}

/** A candidate of the rollout: an old process (plain ZooKeeper), or the migrating backend in a phase. */
async function candidate(kind: 'old' | 'dual' | 'to-only', election: string, candidateId: string): Promise<Elector> {
  const backend: ElectionBackend =
    kind === 'old'
      ? zookeeper()
      : kind === 'dual'
        ? new MigratingBackend({ from: zookeeper(), to: new MysqlBackend({ uri: MYSQL_URL }), phase: 'dual' })
        : new MysqlBackend({ uri: MYSQL_URL });
  backends.push(backend);
  const elector = new Elector({ backend, election, candidateId, leaseMs: LEASE_MS });
  electors.push(elector);
  await elector.start();
  return elector;
}

function migrateStatus(election: string, ...extra: string[]) {
  return runConclave(['migrate', 'status', '--from', zookeeperUrl(), '--to', MYSQL_URL, '--election', election, ...extra]);
}

interface StatusJson {
  election: string;
  from: { backend: string; leaderId: string | null; token: number | null; candidates: string[] | null; error: unknown };
  to: { backend: string; leaderId: string | null; token: number | null; candidates: string[] | null; error: { code: string; message: string } | null };
  candidates: Array<{ id: string; phase: string }>;
  next: { safe: string; situation: string; reason: string };
}

async function statusJson(election: string, ...urls: string[]): Promise<{ code: number | null; json: StatusJson; stderr: string }> {
  const r = urls.length
    ? await runConclave(['migrate', 'status', '--json', '--from', urls[0]!, '--to', urls[1]!, '--election', election])
    : await migrateStatus(election, '--json');
  return { code: r.code, json: JSON.parse(r.stdout) as StatusJson, stderr: r.stderr };
}

/** The candidates ZooKeeper lists for `election` (to wait until a follower has joined the queue). */
async function zookeeperCandidates(election: string): Promise<string[]> {
  const reader = zookeeper();
  try {
    return await reader.candidates!.list(election);
  } finally {
    await reader.close();
  }
}

describe('conclave migrate status (ZooKeeper → MySQL)', () => {
  test('an old ZooKeeper process leading: next says keep deploying dual, do not deploy to-only', async () => {
    const election = uniqueElection('mig-old');
    const old = await candidate('old', election, 'old-1');
    await waitFor(() => old.isLeader(), 'the old process to lead', 30_000);
    await candidate('dual', election, 'dual-1');
    await waitFor(async () => (await zookeeperCandidates(election)).includes('dual-1'), 'the dual process in from\'s queue', 30_000, 100);

    const { code, json } = await statusJson(election);
    expect(code).toBe(0);
    expect(json.from).toMatchObject({ backend: 'zookeeper', leaderId: 'old-1', token: old.token, error: null });
    expect(json.to).toEqual({ backend: 'mysql', leaderId: null, token: null, candidates: null, error: null });
    expect(json.next.safe).toBe('dual');
    expect(json.next.situation).toBe('from-leader-not-on-to');
    expect(json.candidates).toEqual(
      expect.arrayContaining([
        { id: 'old-1', phase: 'from' },
        { id: 'dual-1', phase: 'from' },
      ]),
    );

    const text = await migrateStatus(election);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^from: +zookeeper, leader old-1 \(token \d+\)$/m);
    expect(text.stdout).toMatch(/^to candidates: +\(mysql cannot list candidates: its leader only\)$/m);
    const next = text.stdout.split('\n').filter((l) => l.startsWith('next:'));
    expect(next).toHaveLength(1);
    expect(next[0]).toMatch(/the leader on from is not leading on to .*keep deploying dual; do not deploy to-only yet$/);
  });

  test('after the old process stops, a dual process leads both sides and next says deploying to-only is safe', async () => {
    const election = uniqueElection('mig-dual');
    const old = await candidate('old', election, 'old-1');
    await waitFor(() => old.isLeader(), 'the old process to lead', 30_000);
    const dual = await candidate('dual', election, 'dual-1');
    await old.stop();
    await waitFor(() => dual.isLeader(), 'the dual process to lead', 30_000);

    const { code, json } = await statusJson(election);
    expect(code).toBe(0);
    expect(json.from).toMatchObject({ leaderId: 'dual-1', candidates: ['dual-1'] });
    expect(json.to).toMatchObject({ leaderId: 'dual-1', token: dual.token });
    expect(json.to.token!).toBeGreaterThanOrEqual(json.from.token!);
    expect(json.candidates).toEqual([{ id: 'dual-1', phase: 'dual' }]);
    expect(json.next).toEqual({
      safe: 'to-only',
      situation: 'dual-leads-both',
      reason: `a dual candidate leads on both sides (from token ${json.from.token}, to token ${json.to.token}): once no old process is left, deploying to-only is safe`,
    });

    const text = await migrateStatus(election);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^phases: +dual-1 dual \(inferred\)$/m);
    expect(text.stdout).toMatch(/^next: +a dual candidate leads on both sides .*deploying to-only is safe$/m);
  });

  test('--json is one object with exactly the documented keys; only to leading says to-only is safe', async () => {
    const election = uniqueElection('mig-json');
    const toOnly = await candidate('to-only', election, 'to-1');
    await waitFor(() => toOnly.isLeader(), 'the to-only process to lead', 30_000);

    const r = await migrateStatus(election, '--json');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const json = JSON.parse(r.stdout) as StatusJson;
    expect(Object.keys(json).sort()).toEqual(['candidates', 'election', 'from', 'next', 'to']);
    for (const side of [json.from, json.to]) expect(Object.keys(side).sort()).toEqual(['backend', 'candidates', 'error', 'leaderId', 'token']);
    expect(Object.keys(json.next).sort()).toEqual(['reason', 'safe', 'situation']);
    expect(json).toEqual({
      election,
      from: { backend: 'zookeeper', leaderId: null, token: null, candidates: [], error: null },
      to: { backend: 'mysql', leaderId: 'to-1', token: toOnly.token, candidates: null, error: null },
      candidates: [{ id: 'to-1', phase: 'to-only' }],
      next: {
        safe: 'to-only',
        situation: 'to-leads-alone',
        reason: 'only to has a leader: dual or to-only processes lead; deploying to-only is safe; after the last dual process is gone from can be retired',
      },
    });
  });

  test('no leader on either side: next says wait', async () => {
    const { code, json } = await statusJson(uniqueElection('mig-none'));
    expect(code).toBe(0);
    expect(json.next).toEqual({ safe: 'wait', situation: 'no-leader', reason: 'no leader on either side: wait a lease and check again' });
    expect(json.candidates).toEqual([]);
  });

  test('a side that does not answer: the report names it, says no step is safe, exits 1, and hides the password', async () => {
    const election = uniqueElection('mig-down');
    const unreachable = 'mysql://root:not-shown-secret@127.0.0.1:1/test';
    const { code, json, stderr } = await statusJson(election, zookeeperUrl(), unreachable);
    expect(code).toBe(1);
    expect(json.to.error?.code).toBe('BACKEND_UNAVAILABLE');
    expect(json.from.error).toBeNull();
    expect(json.next).toEqual({
      safe: 'none',
      situation: 'unreadable',
      reason: 'to could not be read (BACKEND_UNAVAILABLE): no step is safe until it answers',
    });
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^conclave: to \(mysql\) could not be read: /);

    const text = await runConclave(['migrate', 'status', '--from', zookeeperUrl(), '--to', unreachable, '--election', election]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^to: +mysql, could not be read \(BACKEND_UNAVAILABLE\)$/m);
    expect(text.stdout).toMatch(/^next: +to could not be read .*no step is safe until it answers$/m);
    expect(`${JSON.stringify(json)}${stderr}${text.stdout}${text.stderr}`).not.toContain('not-shown-secret');
  });

  test('invalid input is rejected before any connection: one line, exit 2', async () => {
    const r = await runConclave(['migrate', 'status', '--from', zookeeperUrl(), '--to', `${zookeeperUrl()}/`, '--election', 'x']);
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r)).toMatch(/--from and --to name the same backend/);
  });
});
