import { afterEach, expect, test } from '@jest/globals';
import { Elector, MemoryBackend, MemoryStore, type ElectionBackend } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';
import { waitFor } from '@conclave/test-harness';

// `getLeader` through a dual MigratingBackend (what `conclave status` shows for a `migrate:` URL)
// must name the candidate that acts as leader in every fleet mix of the rollout, with the token
// its Elector holds. Memory "servers", so the answer does not wait on I/O.

const LEASE_MS = 1500;
const electors: Elector[] = [];
const backends: ElectionBackend[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

function keep<T extends ElectionBackend>(backend: T): T {
  backends.push(backend);
  return backend;
}

async function leadingElector(backend: ElectionBackend, election: string, candidateId: string): Promise<Elector> {
  const elector = new Elector({ backend: keep(backend), election, candidateId, leaseMs: LEASE_MS, retryMs: 50 });
  electors.push(elector);
  await elector.start();
  await waitFor(() => elector.isLeader(), `${candidateId} to lead`);
  return elector;
}

function dual(fromStore: MemoryStore, toStore: MemoryStore): MigratingBackend {
  return keep(
    new MigratingBackend({ from: new MemoryBackend({ store: fromStore }), to: new MemoryBackend({ store: toStore }), phase: 'dual' }),
  );
}

test.each([
  ['an old node (step 1)', 'from-only'],
  ['a dual node', 'dual'],
  ['a to-only node beside dual ones (step 2)', 'to-only'],
] as const)('a dual migrate backend reports the acting leader when it is %s, with its token', async (_what, kind) => {
  const fromStore = new MemoryStore();
  const toStore = new MemoryStore();
  const election = `dual-status-${kind}`;
  // A dual candidate that has led leaves its tokens on both sides, as in a real rollout.
  const earlier = await leadingElector(dual(fromStore, toStore), election, 'earlier-dual');
  await earlier.stop();

  const backend =
    kind === 'from-only'
      ? new MemoryBackend({ store: fromStore })
      : kind === 'to-only'
        ? new MigratingBackend({ from: new MemoryBackend({ store: fromStore }), to: new MemoryBackend({ store: toStore }), phase: 'to-only' })
        : dual(fromStore, toStore);
  const leader = await leadingElector(backend, election, `acting-${kind}`);

  const reported = await dual(fromStore, toStore).getLeader(election);
  expect(reported).toMatchObject({ candidateId: `acting-${kind}`, token: leader.token });
});

test('a dual migrate backend refuses to answer when one side cannot be read', async () => {
  const fromStore = new MemoryStore();
  const toStore = new MemoryStore();
  const to = new MemoryBackend({ store: toStore });
  const backend = keep(new MigratingBackend({ from: new MemoryBackend({ store: fromStore }), to, phase: 'dual' }));
  await to.close();
  await expect(backend.getLeader('dual-status-down')).rejects.toMatchObject({ code: 'CLOSED' });
});
