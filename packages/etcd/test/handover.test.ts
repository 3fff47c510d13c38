import { afterAll, expect, test } from '@jest/globals';
import { get } from 'node:http';
import { EtcdBackend } from '@conclave/etcd';
import { privateEtcd } from './etcd-test-env';

// A leader's release starts its successor's term in the same transaction (the successor's token
// offset written, as its own campaign would). The successor's campaign then only reads. The
// successor's token must still be above the token floor as it is at the release.

const etcd = privateEtcd();
const opened: Array<{ close(): Promise<void> | void }> = [];
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

function backend(): EtcdBackend {
  const b = new EtcdBackend({ hosts: etcd.hosts, prefix: 'handover/' });
  opened.push(b);
  return b;
}

/** Raft proposals the (single) member committed: every transaction that may write is one, even when its compare fails. */
function proposals(): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port: etcd.cluster.members[0]!.port, path: '/metrics', agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        const m = /^etcd_server_proposals_committed_total (\S+)$/m.exec(body);
        if (m) resolve(Number(m[1]));
        else reject(new Error('no etcd_server_proposals_committed_total in /metrics'));
      });
    }).on('error', reject);
  });
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
  await a.raiseTokenFloor(election, floor);

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
