import { describe, expect, test } from '@jest/globals';
import { Elector, isConclaveError } from '@conclave/core';
import { leaderMetadataOf, type ElectionBackend, type LeaderInfo, type LeaderMetadataKept } from '@conclave/core/spi';
import type { BackendProfile } from './backend-profile';
import { leaderOf } from '../campaign-result';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

type Field = keyof LeaderMetadataKept;
const FIELDS: readonly Field[] = ['value', 'since', 'renewedAt', 'leaseEndsAt', 'transitions'];

// Server timestamps are whole ms, and a server may read its clock at a coarser grain (ZooKeeper's
// node times); pauses are long enough that two reads on either side of one always differ.
const PAUSE_MS = 60;
// How far leaseEndsAt may sit from "last renewal + lease": the server computes both in one step
// on every backend here, so only rounding separates them; the slack is for slow machines.
const LEASE_END_SLACK_MS = 150;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function leader(backend: ElectionBackend, election: string): Promise<LeaderInfo> {
  const info = await backend.getLeader(election);
  if (!info) throw new Error(`nobody leads ${election}`);
  return info;
}

/**
 * Leader metadata (`LeaderInfo`'s optional fields), field by field as the backend declares them
 * in `leaderMetadata`. A field the backend does not declare is skipped with the
 * reason, and must be absent from `getLeader()` (declared, not faked).
 */
export function describeLeaderMetadata(ctx: () => SuiteContext, profile: BackendProfile): void {
  const kept = profile.leaderMetadata;
  const when = (field: Field, title: string) =>
    kept[field] ? test.bind(null, title) : test.skip.bind(null, `${title} (skipped: the backend does not declare leaderMetadata.${field})`);

  describe('leader metadata', () => {
    test('the backend declares what the suite was told, and an Elector refuses a value over 1024 UTF-8 bytes with INVALID_OPTIONS before any I/O', async () => {
      const c = ctx();
      const backend = await c.backend();
      // The suite skips by what the factory says; the backend must say the same.
      expect(leaderMetadataOf(backend)).toEqual(kept);
      // 342 three-byte characters: 1026 bytes, though only 342 UTF-16 units.
      for (const value of ['€'.repeat(342), '\uD800', 42]) {
        let error: unknown;
        try {
          new Elector({ backend, election: c.election('value-size'), value: value as string });
        } catch (err) {
          error = err;
        }
        expect(isConclaveError(error) && error.code).toBe('INVALID_OPTIONS');
      }
      expect(backend.calls).toEqual([]);
      // 1024 bytes exactly is allowed.
      expect(() => new Elector({ backend, election: c.election('value-size'), value: '€'.repeat(341) + 'a' })).not.toThrow();
    });

    when('value', 'getLeader reports the value the leader published, as sent, and none when it published none')(async () => {
      const c = ctx();
      const election = c.election('value');
      const admin = await c.backend();
      // Exactly the 1024-byte limit, with multi-byte characters, quotes and a newline.
      const head = 'http://10.0.0.7:8080/ü€ "quoted" \n';
      const value = head + '.'.repeat(1024 - Buffer.byteLength(head) - 3) + '✓';
      const a = await c.elector(election, 'a', { value });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      expect(await leader(admin, election)).toMatchObject({ candidateId: 'a', value });
      // A follower's campaign does not replace the leader's value.
      const b = await c.backend();
      const tooLong = await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs, value: 'x'.repeat(1025) }).catch((err: unknown) => err);
      expect(isConclaveError(tooLong) && tooLong.code).toBe('INVALID_OPTIONS');
      await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs, value: 'b-value' });
      expect((await leader(admin, election)).value).toBe(value);
      await a.stop();
      await b.release({ election, candidateId: 'b' });
      // A leader that published nothing has no value, not the previous leader's.
      leaderOf(await b.campaign({ election, candidateId: 'c', leaseMs: c.leaseMs }));
      const info = await leader(admin, election);
      expect(info.candidateId).toBe('c');
      expect(info).not.toHaveProperty('value');
      await b.release({ election, candidateId: 'c' });
    });

    when('since', 'since stays put across renewals and moves to the start of each new term')(async () => {
      const c = ctx();
      const election = c.election('since');
      const a = await c.backend();
      const first = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      const since = (await leader(a, election)).since!;
      expect(Number.isSafeInteger(since)).toBe(true);
      await sleep(PAUSE_MS);
      expect((await a.renew({ election, candidateId: 'a', token: first.token, leaseMs: c.leaseMs })).held).toBe(true);
      // A live holder campaigning again keeps its term, and so its start.
      leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      expect((await leader(a, election)).since).toBe(since);
      await a.release({ election, candidateId: 'a' });
      await sleep(PAUSE_MS);
      leaderOf(await a.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs }));
      const next = await leader(a, election);
      expect(next.candidateId).toBe('b');
      expect(next.since!).toBeGreaterThan(since);
      if (kept.renewedAt) expect(next.since!).toBeLessThanOrEqual(next.renewedAt!);
      await a.release({ election, candidateId: 'b' });
    });

    when('renewedAt', 'renewedAt advances with each renewal of the same term')(async () => {
      const c = ctx();
      const election = c.election('renewed');
      const a = await c.backend();
      const { token } = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      const first = (await leader(a, election)).renewedAt!;
      expect(Number.isSafeInteger(first)).toBe(true);
      await sleep(PAUSE_MS);
      expect((await a.renew({ election, candidateId: 'a', token, leaseMs: c.leaseMs })).held).toBe(true);
      const second = await leader(a, election);
      expect(second.token).toBe(token);
      expect(second.renewedAt!).toBeGreaterThan(first);
      // Reading the leader is not a renewal.
      await sleep(PAUSE_MS);
      expect((await leader(a, election)).renewedAt).toBe(second.renewedAt);
      await a.release({ election, candidateId: 'a' });
    });

    when('leaseEndsAt', 'leaseEndsAt is the last renewal plus the lease, and moves on with each renewal')(async () => {
      const c = ctx();
      const election = c.election('ends');
      const a = await c.backend();
      const { token } = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      const taken = await leader(a, election);
      // Without renewedAt, the term's start is the last renewal.
      const start = (info: LeaderInfo) => (kept.renewedAt ? info.renewedAt! : taken.since!);
      if (kept.renewedAt || kept.since) {
        expect(Math.abs(taken.leaseEndsAt! - start(taken) - c.leaseMs)).toBeLessThanOrEqual(LEASE_END_SLACK_MS);
      }
      await sleep(PAUSE_MS);
      expect((await a.renew({ election, candidateId: 'a', token, leaseMs: c.leaseMs })).held).toBe(true);
      const renewed = await leader(a, election);
      expect(renewed.leaseEndsAt!).toBeGreaterThan(taken.leaseEndsAt!);
      if (kept.renewedAt) {
        expect(Math.abs(renewed.leaseEndsAt! - renewed.renewedAt! - c.leaseMs)).toBeLessThanOrEqual(LEASE_END_SLACK_MS);
      }
      await a.release({ election, candidateId: 'a' });
    });

    when('transitions', 'transitions goes up by exactly one per new term, not on renewals')(async () => {
      const c = ctx();
      const election = c.election('transitions');
      const a = await c.backend();
      const { token } = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      const first = (await leader(a, election)).transitions!;
      expect(first).toBe(1);
      await a.renew({ election, candidateId: 'a', token, leaseMs: c.leaseMs });
      leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs }));
      expect((await leader(a, election)).transitions).toBe(1);
      for (const [i, id] of ['b', 'c'].entries()) {
        await a.release({ election, candidateId: i === 0 ? 'a' : 'b' });
        leaderOf(await a.campaign({ election, candidateId: id, leaseMs: c.leaseMs }));
        expect(await leader(a, election)).toMatchObject({ candidateId: id, transitions: 2 + i });
      }
      await a.release({ election, candidateId: 'c' });
    });

    const undeclared = FIELDS.filter((f) => !kept[f]);
    const absentTest = undeclared.length > 0 ? test : test.skip;
    absentTest(
      undeclared.length > 0
        ? `getLeader reports no ${undeclared.join(', ')}: the backend does not declare ${undeclared.length > 1 ? 'them' : 'it'}`
        : 'getLeader reports no undeclared field (skipped: the backend declares every field)',
      async () => {
        const c = ctx();
        const election = c.election('undeclared');
        const a = await c.backend();
        const { token } = leaderOf(await a.campaign({ election, candidateId: 'a', leaseMs: c.leaseMs, value: 'v' }));
        await a.renew({ election, candidateId: 'a', token, leaseMs: c.leaseMs });
        const info = await leader(a, election);
        for (const field of undeclared) expect(info).not.toHaveProperty(field);
        await a.release({ election, candidateId: 'a' });
      },
    );
  });
}
