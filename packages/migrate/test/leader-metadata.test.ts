import { expect, test } from '@jest/globals';
import { MemoryBackend } from '@conclave/core';
import { NO_LEADER_METADATA } from '@conclave/core/spi';
import { MigratingBackend } from '@conclave/migrate';

/** A memory backend that declares (and so may report) only the value. */
function valueOnly(): MemoryBackend {
  const backend = new MemoryBackend();
  Object.defineProperty(backend, 'leaderMetadata', { value: { ...NO_LEADER_METADATA, value: true } });
  return backend;
}

test('dual: the value goes to both sides; getLeader carries only the metadata both sides keep', async () => {
  const from = new MemoryBackend();
  const to = valueOnly();
  const dual = new MigratingBackend({ from, to, phase: 'dual' });
  expect(dual.leaderMetadata).toEqual({ ...NO_LEADER_METADATA, value: true });
  const election = 'meta-dual';
  expect(await dual.campaign({ election, candidateId: 'a', leaseMs: 1000, value: 'addr' })).toMatchObject({ role: 'leader' });
  expect(await from.getLeader(election)).toMatchObject({ value: 'addr', transitions: 1 });
  expect(await to.getLeader(election)).toMatchObject({ value: 'addr' });
  const info = await dual.getLeader(election);
  expect(info).toEqual({ candidateId: 'a', token: expect.any(Number), value: 'addr' });
  await dual.close();
});

test('from-only and to-only: leaderMetadata and getLeader are the side in use', async () => {
  const from = new MemoryBackend();
  const to = valueOnly();
  for (const [phase, side] of [['from-only', from], ['to-only', to]] as const) {
    const backend = new MigratingBackend({ from, to, phase });
    expect(backend.leaderMetadata).toEqual(side.leaderMetadata);
    const election = `meta-${phase}`;
    await backend.campaign({ election, candidateId: 'a', leaseMs: 1000, value: 'v' });
    expect(await backend.getLeader(election)).toEqual(await side.getLeader(election));
  }
});
