import { afterEach, expect, test } from '@jest/globals';
import { Elector, MemoryBackend, MemoryStore, type ElectionBackend } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';
import { ControlledBackend, checkSplitBrain, HistoryRecorder, waitFor } from '@conclave/test-harness';

// In `dual`, a candidate leads only while it holds the lease on both backends. A plain `from`
// (or `to`) candidate holding its side must keep every dual candidate a follower, however many
// times it campaigns; and a dual leader holds both sides. Memory "servers", so no waiting on I/O.

const LEASE_MS = 1500;
const electors: Elector[] = [];
const backends: ElectionBackend[] = [];
const history = new HistoryRecorder();

afterEach(async () => {
  history.detach();
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await Promise.all(backends.splice(0).map((b) => b.close()));
  history.events.splice(0);
});

function elector(backend: ElectionBackend, election: string, candidateId: string): Elector {
  backends.push(backend);
  const e = new Elector({ backend, election, candidateId, leaseMs: LEASE_MS, retryMs: 50 });
  electors.push(e);
  history.attach(e);
  return e;
}

test.each([
  ['from', 'an old node holding `from`'],
  ['to', 'a to-only node holding `to`'],
] as const)('a dual candidate never leads while %s is held by another (%s)', async (side, _what) => {
  const fromStore = new MemoryStore();
  const toStore = new MemoryStore();
  const election = `dual-both-${side}`;
  const plain = elector(new MemoryBackend({ store: side === 'from' ? fromStore : toStore }), election, 'plain');
  await plain.start();
  await waitFor(() => plain.isLeader(), 'the plain node to lead');

  const dualBackend = new ControlledBackend(
    new MigratingBackend({ from: new MemoryBackend({ store: fromStore }), to: new MemoryBackend({ store: toStore }), phase: 'dual' }),
  );
  const dual = elector(dualBackend, election, 'dual');
  let dualLedWhilePlainLed = 0;
  const sampler = setInterval(() => {
    if (dual.isLeader() && plain.isLeader()) dualLedWhilePlainLed++;
  }, 1);
  try {
    await dual.start();
    // Several campaigns of the dual candidate while the plain one leads (each when the lease can end).
    await waitFor(() => dualBackend.delivered('campaign').length >= 3, 'three campaigns of the dual candidate', 30_000);
    expect(dual.isLeader()).toBe(false);
    expect(dualBackend.delivered('campaign').every((c) => (c.result as { role: string }).role === 'follower')).toBe(true);
    if (side === 'from') {
      // It did not take `to` either (while a to-only node leads, a dual one keeps `from` on purpose).
      const to = new MemoryBackend({ store: toStore });
      backends.push(to);
      expect(await to.getLeader(election)).toBeNull();
    }

    await plain.stop();
    await waitFor(() => dual.isLeader(), 'the dual candidate to lead once the plain one left', 30_000);
    const fromSide = new MemoryBackend({ store: fromStore });
    const toSide = new MemoryBackend({ store: toStore });
    backends.push(fromSide, toSide);
    expect((await fromSide.getLeader(election))?.candidateId).toBe('dual');
    expect((await toSide.getLeader(election))?.candidateId).toBe('dual');
  } finally {
    clearInterval(sampler);
  }
  expect(dualLedWhilePlainLed).toBe(0);
  expect(checkSplitBrain(history.events).overlaps).toEqual([]);
});
