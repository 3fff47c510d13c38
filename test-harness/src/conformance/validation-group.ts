import { describe, expect, test } from '@jest/globals';
import { Elector, isConclaveError, type ConclaveErrorCode } from '@conclave/core';
import type { SuiteContext } from './suite-context';

export const BAD_ELECTION_NAMES: unknown[] = [
  '',
  ' ',
  'a/b',
  '../etc',
  'has space',
  '{tag}',
  'x'.repeat(129),
  'é',
  'a\nb',
  "x');DROP TABLE leader_election;--",
  '-leading-dash',
  null,
  undefined,
  42,
  {},
];

export const BAD_CANDIDATE_IDS: unknown[] = ['', 'has a space', 'tab\there', 'x'.repeat(201), 'ünicode', 'nul\u0000', 7, null];

/** Not a fencing token: what `renew` and a `release` that names its term refuse. */
export const BAD_TOKENS: unknown[] = [1.5, Number.NaN, Number.POSITIVE_INFINITY, '7', null, undefined, 2 ** 60];

export const BAD_ELECTOR_OPTIONS: Array<Record<string, unknown>> = [
  { leaseMs: 0 },
  { leaseMs: -5 },
  { leaseMs: 1.5 },
  { leaseMs: Number.NaN },
  { leaseMs: '1000' },
  { leaseMs: 1000, renewMs: 1000 },
  { leaseMs: 1000, renewMs: 960 },
  { leaseMs: 1000, safetyMarginMs: 1000 },
  { retryMs: 0 },
  { renewMs: -1 },
  { logger: 'console' },
  { logger: { info() {} } },
];

async function rejectsWith(promise: Promise<unknown>, code: ConclaveErrorCode): Promise<void> {
  const err = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(isConclaveError(err, code)).toBe(true);
}

/** Bad names and options are refused with a ConclaveError and a stable code, before any I/O. */
export function describeValidation(ctx: () => SuiteContext): void {
  describe('validation', () => {
    test('bad election names are refused by the Elector and by every backend method', async () => {
      const backend = await ctx().backend();
      for (const name of BAD_ELECTION_NAMES) {
        let thrown: unknown;
        try {
          new Elector({ backend, election: name as string });
        } catch (err) {
          thrown = err;
        }
        expect(isConclaveError(thrown, 'INVALID_NAME')).toBe(true);
        await rejectsWith(backend.campaign({ election: name as string, candidateId: 'a', leaseMs: 1000 }), 'INVALID_NAME');
        await rejectsWith(backend.getLeader(name as string), 'INVALID_NAME');
        await rejectsWith(backend.admin!.clearLeader(name as string), 'INVALID_NAME');
        await rejectsWith(backend.admin!.forceLeader(name as string, 'a'), 'INVALID_NAME');
      }
    });

    test('bad candidate ids are refused by the Elector and the backend', async () => {
      const c = ctx();
      const backend = await c.backend();
      const election = c.election('bad-id');
      for (const id of BAD_CANDIDATE_IDS) {
        let thrown: unknown;
        try {
          new Elector({ backend, election, candidateId: id as string });
        } catch (err) {
          thrown = err;
        }
        expect(isConclaveError(thrown, 'INVALID_NAME')).toBe(true);
        await rejectsWith(backend.campaign({ election, candidateId: id as string, leaseMs: 1000 }), 'INVALID_NAME');
        await rejectsWith(backend.admin!.forceLeader(election, id as string), 'INVALID_NAME');
        await rejectsWith(backend.release({ election, candidateId: id as string }), 'INVALID_NAME');
      }
      expect(await backend.getLeader(election)).toBeNull();
    });

    test('malformed tokens, release bounds and token floors are refused with INVALID_OPTIONS, and the term is kept', async () => {
      const c = ctx();
      const backend = await c.backend();
      const election = c.election('bad-token');
      const won = await backend.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs });
      if (won.role !== 'leader') throw new Error(`expected to lead an empty election, got ${JSON.stringify(won)}`);
      for (const token of BAD_TOKENS) {
        await rejectsWith(backend.renew({ election, candidateId: 'a', token: token as number, leaseMs: c.leaseMs }), 'INVALID_OPTIONS');
        if (token !== null && token !== undefined) {
          await rejectsWith(backend.release({ election, candidateId: 'a', token: token as number }), 'INVALID_OPTIONS');
        }
      }
      for (const notAbove of [-1, 1.5, Number.NaN, '3']) {
        await rejectsWith(backend.release({ election, candidateId: 'a', notAbove: notAbove as number }), 'INVALID_OPTIONS');
      }
      if (backend.tokenFloor) {
        for (const floor of [-1, 1.5, Number.NaN, '3', null]) {
          await rejectsWith(backend.tokenFloor.raise(election, floor as number), 'INVALID_OPTIONS');
        }
      }
      expect(await backend.getLeader(election)).toMatchObject({ candidateId: 'a', token: won.token });
    });

    test('bad Elector options are refused with INVALID_OPTIONS', async () => {
      const c = ctx();
      const backend = await c.backend();
      for (const bad of BAD_ELECTOR_OPTIONS) {
        let thrown: unknown;
        try {
          new Elector({ backend, election: c.election('opts'), ...bad } as never);
        } catch (err) {
          thrown = err;
        }
        expect([bad, isConclaveError(thrown, 'INVALID_OPTIONS')]).toEqual([bad, true]);
      }
      for (const notOptions of [undefined, null, 'x', [], { election: 'x' }, { backend: {}, election: 'x' }]) {
        let thrown: unknown;
        try {
          new Elector(notOptions as never);
        } catch (err) {
          thrown = err;
        }
        expect(isConclaveError(thrown, 'INVALID_OPTIONS')).toBe(true);
      }
    });
  });
}
