import { randomBytes } from 'node:crypto';
import { afterEach, expect, test } from '@jest/globals';
import { Elector, type ElectionBackend } from '@conclave/core';
import { EtcdBackend } from '@conclave/etcd';
import { ControlledBackend, waitFor } from '@conclave/test-harness';
import { closedAfterAll, privateEtcd } from './etcd-test-env';

// A follower watches its predecessor, not the head of the queue: the leader it names must still
// follow a change of leader that happens ahead of its predecessor. Each candidate has its own
// backend (its own process, as far as etcd can tell): no watch is shared between them.
const etcd = privateEtcd();
const opened = closedAfterAll();
const electors: Elector[] = [];
const held: ControlledBackend[] = [];
const run = randomBytes(3).toString('hex');
const LEASE = 1500;

afterEach(async () => {
  for (const backend of held.splice(0)) backend.releaseReplies();
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

function backend(): EtcdBackend {
  const b = new EtcdBackend({ hosts: etcd.hosts });
  opened.push(b);
  return b;
}

function elector(b: ElectionBackend, election: string, candidateId: string): Elector {
  // The conformance suite's pacing.
  const e = new Elector({ backend: b, election, candidateId, leaseMs: LEASE, retryMs: LEASE / 5 });
  electors.push(e);
  return e;
}

test('a follower two places behind the leader names the next leader once the leader’s key goes', async () => {
  const election = `etcd-follower-leader-${run}`;
  const slow = new ControlledBackend(backend());
  const b = elector(slow, election, 'b');
  const c = elector(backend(), election, 'c');
  const a = elector(backend(), election, 'a');
  // One at a time, so that the queue is b, c, a: c waits on b, a on c.
  await b.start();
  await waitFor(() => b.isLeader(), 'b to lead', 20_000);
  await c.start();
  await waitFor(() => c.state.leaderId === 'b', 'c to follow b', 20_000);
  await a.start();
  await waitFor(() => a.state.leaderId === 'b', 'a to follow b', 20_000);

  // b's renewals go unanswered (a loaded process): its lease runs out, its key goes and it joins
  // again at the back; c, woken by its predecessor's end, leads.
  held.push(slow);
  slow.holdReplies(['renew']);
  await waitFor(() => c.isLeader(), 'c to lead', 20_000);
  expect(b.isLeader()).toBe(false);

  // As the conformance suite asks: within two leases every follower names the leader. a's
  // predecessor (c) never went, so only a change of the head can tell a.
  await waitFor(() => a.state.leaderId === 'c' && b.state.leaderId === 'c', 'a and b to name c', 2 * LEASE).catch(() => undefined);
  expect({ a: a.state.leaderId, b: b.state.leaderId }).toEqual({ a: 'c', b: 'c' });
  expect(c.isLeader()).toBe(true);
}, 60_000);
