import { performance } from 'node:perf_hooks';
import { afterEach, expect, test } from '@jest/globals';
import { isConclaveError, MemoryBackend, MemoryStore } from '@conclave/core';
import { ControlledBackend, waitFor } from '@conclave/test-harness';

// The conformance suite's timing tests are only as good as the wrapper that times the replies:
// each control must do what it says, with the server (a MemoryStore here) really acting.

const store = new MemoryStore();
const opened: ControlledBackend[] = [];
const controlled = () => {
  const b = new ControlledBackend(new MemoryBackend({ store }));
  opened.push(b);
  return b;
};
const plain = new MemoryBackend({ store });
let n = 0;
const election = () => `controlled-${++n}`;

afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

test('delayReplies: the server acts at once, the caller hears later; other methods are not delayed', async () => {
  const b = controlled();
  const e = election();
  b.delayReplies(200, ['campaign']);
  const sent = performance.now();
  const pending = b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 });
  await waitFor(async () => (await plain.getLeader(e))?.candidateId === 'a', 'the server to grant');
  const result = await pending;
  expect(result.role).toBe('leader');
  expect(performance.now() - sent).toBeGreaterThanOrEqual(200);
  const call = b.calls[0]!;
  expect(call.deliveredAt! - call.answeredAt!).toBeGreaterThanOrEqual(199);
  await b.getLeader(e);
  // Not delayed: delivered in the same turn as the server's answer.
  const other = b.calls[1]!;
  expect(other.method).toBe('getLeader');
  expect(other.deliveredAt! - other.answeredAt!).toBeLessThan(1);
});

test('holdReplies/releaseReplies: answers wait for the release, in order', async () => {
  const b = controlled();
  const e = election();
  b.holdReplies();
  const order: string[] = [];
  const first = b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 }).then(() => order.push('campaign'));
  const second = b.getLeader(e).then(() => order.push('getLeader'));
  await waitFor(() => b.calls.every((c) => c.answeredAt !== undefined), 'the server to answer');
  expect(order).toEqual([]);
  expect((await plain.getLeader(e))?.candidateId).toBe('a');
  b.releaseReplies();
  await Promise.all([first, second]);
  expect(order).toEqual(['campaign', 'getLeader']);
});

test('hang/unhang: calls never reach the server, then are refused with BACKEND_UNAVAILABLE', async () => {
  const b = controlled();
  const e = election();
  b.hang();
  const pending = b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 }).catch((err: unknown) => err);
  await new Promise((r) => setImmediate(r));
  expect(b.calls[0]!.reachedServer).toBe(false);
  expect(await plain.getLeader(e)).toBeNull();
  b.unhang();
  expect(isConclaveError(await pending, 'BACKEND_UNAVAILABLE')).toBe(true);
  expect((await b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 })).role).toBe('leader');
});

test('hang drops change hints', async () => {
  const b = controlled();
  const e = election();
  let hints = 0;
  let witnessHints = 0;
  const unwatch = b.changes!.watch(e, 'w', () => hints++);
  // Subscribed after b's: the store notifies in order, so when it hears a change, b was told too.
  const unwitness = plain.changes!.watch(e, 'witness', () => witnessHints++);
  await plain.campaign({ election: e, candidateId: 'x', leaseMs: 5000 });
  await waitFor(() => witnessHints === 1, 'the first change');
  expect(hints).toBe(1);
  b.hang();
  await plain.release({ election: e, candidateId: 'x' });
  await waitFor(() => witnessHints === 2, 'the second change');
  expect(hints).toBe(1);
  unwatch();
  unwitness();
});

test('failCalls: refused at once and unsent', async () => {
  const b = controlled();
  const e = election();
  b.failCalls();
  const err = await b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 }).catch((x: unknown) => x);
  expect(isConclaveError(err, 'BACKEND_UNAVAILABLE')).toBe(true);
  expect(await plain.getLeader(e)).toBeNull();
  b.failCalls(false);
  expect((await b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 })).role).toBe('leader');
});

test('capGrant: a granted lease is reported as at most the cap', async () => {
  const b = controlled();
  const e = election();
  b.capGrant(700);
  const result = await b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 });
  expect(result).toMatchObject({ role: 'leader', leaseMs: 700 });
  if (result.role !== 'leader') return;
  expect(await b.renew({ election: e, candidateId: 'a', token: result.token, leaseMs: 5000 })).toEqual({ held: true, leaseMs: 700 });
});

test('hangAfter: hangs the moment the matching answer is delivered', async () => {
  const b = controlled();
  const e = election();
  b.hangAfter(['campaign']);
  expect((await b.campaign({ election: e, candidateId: 'a', leaseMs: 5000 })).role).toBe('leader');
  expect(b.isHanging).toBe(true);
});
