import { performance } from 'node:perf_hooks';
import { MemoryBackend } from '@conclave/core';
import { ControlledBackend, delay } from '@conclave/test-harness';
import { OldLeaderWatch } from '../src/old-leader-watch';

// What a to-only candidate concludes from `from`'s leader (the forbidden-mix guard), on the
// in-process backend: no leader, a leader, the same term for a lease (a conflict), a `from` that
// has not answered yet (no term until it does), and one that fails or stays silent for a lease
// (unknown, so the guard never blocks a finished migration).
const LEASE_MS = 1000;
const WAIT_MS = 100;

function setup() {
  const from = new ControlledBackend(new MemoryBackend());
  return { from, watch: new OldLeaderWatch(from, 'mysql') };
}

test('reports no leader, then the leader once one campaigns on from', async () => {
  const { from, watch } = setup();
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
  await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toMatchObject({ candidateId: 'old-1' });
  expect(watch.conflict('e')).toBeUndefined();
});

test('finds a conflict only once the same from term has lasted a lease', async () => {
  const { from, watch } = setup();
  await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  await delay(LEASE_MS / 2);
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  expect(watch.conflict('e')).toBeUndefined();
  await delay(LEASE_MS / 2 + 50);
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  expect(watch.conflict('e')).toMatch(/migration conflict: old-1 leads on memory .* to-only candidates campaign on mysql/);
});

test('a new from term or no leader clears the conflict', async () => {
  const { from, watch } = setup();
  const first = await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  await delay(LEASE_MS + 50);
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  expect(watch.conflict('e')).toBeDefined();
  await from.release({ election: 'e', candidateId: 'old-1', token: first.role === 'leader' ? first.token : 0 });
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
  expect(watch.conflict('e')).toBeUndefined();
  // A dual candidate passing through from's head: a term seen once is no conflict.
  await from.campaign({ election: 'e', candidateId: 'dual-2', leaseMs: 10_000 });
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toMatchObject({ candidateId: 'dual-2' });
  expect(watch.conflict('e')).toBeUndefined();
});

test('a from that has not answered yet blocks a term (looking), one unanswered for a lease is unknown', async () => {
  const { from, watch } = setup();
  await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  from.hang();
  const started = performance.now();
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBe('looking');
  expect(performance.now() - started).toBeLessThan(WAIT_MS + 200);
  // Asked again while the look is awaited: still no answer, still no term.
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBe('looking');
  await delay(LEASE_MS - 2 * WAIT_MS + 50);
  // Unanswered for a lease: from counts as gone.
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeUndefined();
  from.unhang();
});

test('a look still awaited defers to one answered in the last half lease', async () => {
  const { from, watch } = setup();
  await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toMatchObject({ candidateId: 'old-1' });
  from.hang();
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toMatchObject({ candidateId: 'old-1' });
  await delay(LEASE_MS / 2);
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBe('looking');
  from.unhang();
});

test('a from that fails is unknown at once, and remembered for half a lease', async () => {
  const { from } = setup();
  from.failCalls(true);
  await delay(10);
  const failing = new OldLeaderWatch(from, 'mysql');
  expect(await failing.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeUndefined();
  // Remembered: the next term neither waits on a from known to be down nor asks it again.
  const asked = from.calls.length;
  const started = performance.now();
  expect(await failing.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeUndefined();
  expect(performance.now() - started).toBeLessThan(WAIT_MS);
  expect(from.calls.length).toBe(asked);
  // Half a lease later it is asked again.
  from.failCalls(false);
  await delay(LEASE_MS / 2 + 50);
  expect(await failing.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
});

test('a from term whose holder was seen leading to is a dual one: it neither blocks a term nor becomes a conflict', async () => {
  const { from, watch } = setup();
  // A dual leader holds both sides; a to-only follower's campaign on `to` names it (as an instance).
  await from.campaign({ election: 'e', candidateId: 'dual-1', leaseMs: 10_000 });
  watch.noteToLeader('e', 'dual-1 0123456789ab');
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
  // Killed, its ZooKeeper node outlives its `to` lease: still the same from term a lease later.
  await delay(LEASE_MS + 50);
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
  expect(watch.conflict('e')).toBeUndefined();
});

test('seeing to led by the from leader after the fact clears its conflict; another id on to does not', async () => {
  const { from, watch } = setup();
  await from.campaign({ election: 'e', candidateId: 'old-1', leaseMs: 10_000 });
  watch.noteToLeader('e', 'to-only-2 0123456789ab');
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  await delay(LEASE_MS + 50);
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toMatchObject({ candidateId: 'old-1' });
  expect(watch.conflict('e')).toBeDefined();
  watch.noteToLeader('e', 'old-1');
  expect(watch.conflict('e')).toBeUndefined();
  expect(await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS)).toBeNull();
});

test('with a from that shows dead candidates for longer than a lease, a term is suspect after a lease and a conflict only after that', async () => {
  const STALE_MS = 1500;
  class LingeringBackend extends MemoryBackend {
    readonly staleLeaderMs = STALE_MS;
  }
  const from = new LingeringBackend();
  const watch = new OldLeaderWatch(from, 'mysql');
  await from.campaign({ election: 'e', candidateId: 'gone-1', leaseMs: 10_000 });
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  await delay(LEASE_MS + 50);
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  // A dead candidate may still be shown: suspect (a to-only leader steps down), not yet reported.
  expect(watch.suspected('e')).toBe(true);
  expect(watch.conflict('e')).toBeUndefined();
  await delay(STALE_MS);
  await watch.leaderBeforeTerm('e', LEASE_MS, WAIT_MS);
  expect(watch.conflict('e')).toMatch(/migration conflict: gone-1 leads/);
});
