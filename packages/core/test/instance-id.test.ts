import { describe, expect, test } from '@jest/globals';
import { Elector, MemoryBackend } from '@conclave/core';
import { candidateOf } from '@conclave/core/spi';
import { instanceIdFor } from '../src/instance-id';

describe('instance ids', () => {
  test('one candidate in different elections of one process shares its instance id (one batch per holder)', () => {
    const a = instanceIdFor('share-me', 'election-a');
    const b = instanceIdFor('share-me', 'election-b');
    expect(b).toBe(a);
    expect(candidateOf(a)).toBe('share-me');
  });

  test('a second instance of one candidate in the same election never gets an id given there before', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) seen.add(instanceIdFor('twice', 'same-election'));
    expect(seen.size).toBe(5);
    // The ids already given in other elections are not reused there either.
    const other = instanceIdFor('twice', 'other-election');
    expect(seen.has(other)).toBe(true);
    expect(instanceIdFor('twice', 'other-election')).not.toBe(other);
  });

  test('different candidates never share an instance id', () => {
    expect(candidateOf(instanceIdFor('cand-x', 'e'))).toBe('cand-x');
    expect(instanceIdFor('cand-x', 'f')).not.toBe(instanceIdFor('cand-y', 'f'));
  });

  test('Electors: two of one candidate in one election hold distinct ids, one per election shares it', async () => {
    const backend = new MemoryBackend();
    const first = new Elector({ backend, election: 'ids-1', candidateId: 'node' });
    const twin = new Elector({ backend, election: 'ids-1', candidateId: 'node' });
    const elsewhere = new Elector({ backend, election: 'ids-2', candidateId: 'node' });
    try {
      expect(twin.instanceId).not.toBe(first.instanceId);
      expect([first.instanceId, twin.instanceId]).toContain(elsewhere.instanceId);
    } finally {
      await Promise.all([first.stop(), twin.stop(), elsewhere.stop()]);
    }
  });
});
