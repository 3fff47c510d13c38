import { expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { EtcdBackend } from '@conclave/etcd';
import { closedAfterAll, kvRequests as kvRequestsOf, metricSum, privateEtcd, sleep } from './etcd-test-env';

// A leader's release starts its successor's term in the same transaction (the successor's token
// offset written, as its own campaign would). The successor's campaign then only reads. The
// successor's token must still be above the token floor as it is at the release.

const etcd = privateEtcd();
const opened = closedAfterAll();

function backend(): EtcdBackend {
  const b = new EtcdBackend({ hosts: etcd.hosts, prefix: 'handover/' });
  opened.push(b);
  return b;
}

/** Raft proposals the (single) member committed: every transaction that may write is one, even when its compare fails. */
const proposals = () => metricSum(etcd.cluster.members[0]!.port, 'etcd_server_proposals_committed_total');
/** KV requests (Txn and Range) the member received: one per round trip of a release. */
const kvRequests = () => kvRequestsOf(etcd.cluster.members[0]!.port);

/** a leads `election`, b then c queued behind it when its term started (z led before); resolves a's token. */
async function leaderWithQueue(election: string, a: EtcdBackend, b: EtcdBackend, c: EtcdBackend): Promise<number> {
  const first = backend();
  await first.campaign({ election, candidateId: 'z', leaseMs: 3000 });
  const aWaits = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  await c.campaign({ election, candidateId: 'c', leaseMs: 3000 });
  expect(aWaits.role).toBe('follower');
  const zToken = (await first.getLeader(election))!.token;
  await first.release({ election, candidateId: 'z', token: zToken });
  const won = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  expect(won.role).toBe('leader');
  return (won as { token: number }).token;
}

test('a release hands the term to the next candidate: it leads at once with a higher token, and its campaign sends no write (no Raft proposal)', async () => {
  const election = `handover-${process.pid}`;
  const [a, b] = [backend(), backend()];
  const first = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  const second = await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  expect([first.role, second.role]).toEqual(['leader', 'follower']);
  const aToken = (first as { token: number }).token;

  await a.release({ election, candidateId: 'a', token: aToken });
  const handed = await a.getLeader(election);
  expect(handed?.candidateId).toBe('b');
  expect(handed!.token).toBeGreaterThan(aToken);

  const before = await proposals();
  const won = await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  expect(won).toMatchObject({ role: 'leader', token: handed!.token });
  expect((await proposals()) - before).toBe(0);
  await b.release({ election, candidateId: 'b', token: handed!.token });
});

test('a release hands over above a token floor raised during the term', async () => {
  const election = `handover-floor-${process.pid}`;
  const [a, b] = [backend(), backend()];
  const first = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  const aToken = (first as { token: number }).token;
  const floor = aToken + 1_000_000;
  await a.tokenFloor!.raise(election, floor);

  await a.release({ election, candidateId: 'a', token: aToken });
  const won = await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  expect(won.role).toBe('leader');
  expect((won as { token: number }).token).toBeGreaterThan(floor);
  expect((await b.getLeader(election))?.token).toBe((won as { token: number }).token);
  await b.release({ election, candidateId: 'b', token: (won as { token: number }).token });
});

test('a release without a token, or of a term that is not the current one, hands nothing over', async () => {
  const election = `handover-none-${process.pid}`;
  const [a, b] = [backend(), backend()];
  const first = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  const aToken = (first as { token: number }).token;
  // An older term's token: nothing is released, nothing handed over.
  await a.release({ election, candidateId: 'a', token: aToken - 1 });
  expect((await a.getLeader(election))?.candidateId).toBe('a');
  // No token: the key goes, and b's term starts only when b campaigns.
  await a.release({ election, candidateId: 'a' });
  expect(await a.getLeader(election)).toBeNull();
  const won = await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  expect(won.role).toBe('leader');
  expect((won as { token: number }).token).toBeGreaterThan(aToken);
  await b.release({ election, candidateId: 'b', token: (won as { token: number }).token });
});

test('a release hands over in one round trip to the successor its term started with', async () => {
  const election = `handover-hint-${process.pid}`;
  const [a, b, c] = [backend(), backend(), backend()];
  const aToken = await leaderWithQueue(election, a, b, c);
  const before = await kvRequests();
  await a.release({ election, candidateId: 'a', token: aToken });
  expect((await kvRequests()) - before).toBe(1);
  const handed = await b.getLeader(election);
  expect(handed).toMatchObject({ candidateId: 'b' });
  expect(handed!.token).toBeGreaterThan(aToken);
  const won = await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  expect(won).toMatchObject({ role: 'leader', token: handed!.token });
  await b.release({ election, candidateId: 'b', token: handed!.token });
  await c.release({ election, candidateId: 'c' });
});

test('a release whose successor left during the term hands over to the next one still queued, never to the key that left', async () => {
  const election = `handover-gone-${process.pid}`;
  const [a, b, c] = [backend(), backend(), backend()];
  const aToken = await leaderWithQueue(election, a, b, c);
  await b.release({ election, candidateId: 'b' });
  await a.release({ election, candidateId: 'a', token: aToken });
  const handed = await a.getLeader(election);
  expect(handed).toMatchObject({ candidateId: 'c' });
  expect(await a.candidates!.list(election)).toEqual(['c']);
  await c.release({ election, candidateId: 'c', token: handed!.token });
});

test('a release whose term started alone hands over to a candidate that queued during the term', async () => {
  const election = `handover-late-${process.pid}`;
  const [a, b] = [backend(), backend()];
  const first = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  expect(first.role).toBe('leader');
  const aToken = (first as { token: number }).token;
  const before = await kvRequests();
  await a.release({ election, candidateId: 'a', token: aToken });
  expect((await kvRequests()) - before).toBe(1);
  expect(await a.getLeader(election)).toBeNull();

  const again = await a.campaign({ election, candidateId: 'a', leaseMs: 3000 });
  await b.campaign({ election, candidateId: 'b', leaseMs: 3000 });
  const token = (again as { token: number }).token;
  await a.release({ election, candidateId: 'a', token });
  const handed = await a.getLeader(election);
  expect(handed).toMatchObject({ candidateId: 'b' });
  expect(handed!.token).toBeGreaterThan(token);
  await b.release({ election, candidateId: 'b', token: handed!.token });
});

/** Lease keep-alives the member received (each message on a keep-alive stream). */
const keepAlives = () => metricSum(etcd.cluster.members[0]!.port, 'grpc_server_msg_received_total', /grpc_method="LeaseKeepAlive"/);

test('a campaign woken by a hand-over counts on a keep-alive answered within half the TTL: it sends none, and its lease counts from that one', async () => {
  const election = `handover-lasting-${process.pid}`;
  const [a, b] = [backend(), backend()];
  // leaseMs 5500: a 5 s TTL, whose lease b's grant proves for 2.5 s at least.
  const first = await a.campaign({ election, candidateId: 'a', leaseMs: 5500 });
  const joined = performance.now();
  expect((await b.campaign({ election, candidateId: 'b', leaseMs: 5500 })).role).toBe('follower');
  await sleep(300);
  await a.release({ election, candidateId: 'a', token: (first as { token: number }).token });
  const before = await keepAlives();
  const start = performance.now();
  const won = await b.campaign({ election, candidateId: 'b', leaseMs: 5500 });
  expect(won.role).toBe('leader');
  expect((await keepAlives()) - before).toBe(0);
  const { leaseMs } = won as { leaseMs: number };
  expect(leaseMs).toBeLessThanOrEqual(5000 - (start - joined));
  expect(leaseMs).toBeGreaterThan(2500);
  await b.release({ election, candidateId: 'b', token: (won as { token: number }).token });
});
