import { performance } from 'node:perf_hooks';
import { describe, expect, test } from '@jest/globals';
import { capabilityOf, candidateOfNullable, isConclaveError, type DeclaresCapabilities, type Elector, type RevokeReason } from '@conclave/core';
import type { ControlledBackend, ControlledCall } from '../controlled-backend';
import { checkSplitBrain } from '../history/split-brain-checker';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** A lease long enough that "well within the lease" is unambiguous on a slow, loaded machine. */
const LONG_LEASE_MS = 8000;

/** The answer of a campaign or renewal that granted a lease, and how long it granted. */
function grantOf(call: ControlledCall): number | null {
  if (call.deliveredAt === undefined || call.result === undefined) return null;
  if (call.method !== 'campaign' && call.method !== 'renew') return null;
  const r = call.result as { role?: string; held?: boolean; leaseMs?: number };
  return (r.role === 'leader' || r.held === true) && typeof r.leaseMs === 'number' ? r.leaseMs : null;
}

/**
 * The latest deadline the SPI allows `elector` after the answers `backend` delivered so far: the
 * send of a granted call, plus the lease granted (never more than asked), minus the margin.
 */
function allowedDeadline(elector: Elector, backend: ControlledBackend): number {
  const { leaseMs, safetyMarginMs } = elector.options;
  let best = -Infinity;
  for (const call of backend.calls) {
    const granted = grantOf(call);
    if (granted !== null) best = Math.max(best, call.sentAt + Math.min(granted, leaseMs) - safetyMarginMs);
  }
  return best;
}

/** This Elector's deadline on the performance.now() timeline, or null when it does not lead. */
function deadlineOf(elector: Elector): number | null {
  const now = performance.now();
  const remaining = elector.health().leaseRemainingMs;
  return elector.isLeader() && remaining !== null ? now + remaining : null;
}

/**
 * Samples `elector`'s deadline every few ms until `renewals` renewals were granted, and checks each
 * sample against what the answers delivered so far allow. Returns the number of samples.
 */
async function checkDeadlines(elector: Elector, backend: ControlledBackend, renewals: number, timeoutMs: number): Promise<number> {
  const granted = () => backend.calls.filter((c) => c.method === 'renew' && grantOf(c) !== null).length;
  const problems: string[] = [];
  let samples = 0;
  await waitFor(
    () => {
      const deadline = deadlineOf(elector);
      if (deadline !== null) {
        samples++;
        const allowed = allowedDeadline(elector, backend);
        // Later than the SPI allows: counted from the reply, or from more lease than granted.
        if (deadline > allowed + 0.5) problems.push(`deadline ${(deadline - allowed).toFixed(1)} ms after the latest allowed`);
        // Earlier than the last grant allows by more than a call's own set-up: not from the send.
        if (deadline < allowed - 5) problems.push(`deadline ${(allowed - deadline).toFixed(1)} ms before the last grant's`);
      }
      return granted() >= renewals;
    },
    `${renewals} granted renewals`,
    timeoutMs,
    5,
  );
  expect(problems).toEqual([]);
  return samples;
}

/** Resolves with the signal of the next whileLeader term of `elector`. */
function nextTermSignal(elector: Elector): Promise<{ token: number; signal: AbortSignal }> {
  return new Promise((resolve) => {
    const unregister = elector.whileLeader(({ token, signal }) => {
      unregister();
      resolve({ token, signal });
    });
  });
}

type Ending = {
  name: string;
  reason: RevokeReason;
  /** Ends a's term; resolves when the ending call returned (not when the term is over). */
  end(args: { c: SuiteContext; a: Elector; aBackend: ControlledBackend; election: string }): Promise<void> | void;
  /** The signal must already be aborted when `end` returns (the term ends in the call itself). */
  atOnce: boolean;
};

const ENDINGS: Ending[] = [
  { name: 'stepDown()', reason: 'stepped-down', atOnce: true, end: ({ a }) => a.stepDown() },
  { name: 'pause()', reason: 'paused', atOnce: true, end: ({ a }) => a.pause() },
  {
    name: 'stop()',
    reason: 'stopped',
    atOnce: true,
    end: ({ a }) => {
      // The term ends in the synchronous part of stop(); the release follows.
      void a.stop();
    },
  },
  {
    name: 'forceLeader() to another candidate (lease lost)',
    reason: 'lease-lost',
    atOnce: false,
    // forceLeader returns once the new term started, so the signal may abort during the call.
    end: async ({ c, election }) => {
      await (await c.backend()).forceLeader(election, 'b');
    },
  },
  {
    name: 'clearLeader() (lease lost)',
    reason: 'lease-lost',
    atOnce: false,
    end: async ({ c, election }) => {
      await (await c.backend()).clearLeader(election);
    },
  },
  {
    name: 'renewals answered too late (lease expired)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ aBackend }) => aBackend.holdReplies(['renew']),
  },
  {
    name: 'a connection that went silent (lost contact)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ c, aBackend }) => c.freeze(aBackend),
  },
  {
    name: 'a connection that refuses every call (lost contact)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ c, aBackend }) => c.freeze(aBackend, 'refuse'),
  },
];

/**
 * Timing, pinned down deterministically: when a leader's deadline falls, what ends a term and
 * when its signal aborts, that a release frees the lease at once, that the server never frees it
 * early, and that push wakes a follower long before any poll could.
 */
export function describeTiming(ctx: () => SuiteContext, declared: DeclaresCapabilities): void {
  const { capabilities } = declared;
  const push = capabilityOf(declared, 'push');
  describe('timing', () => {
    test('the deadline counts from when a call was sent, minus the margin, not from its reply', async () => {
      const c = ctx();
      const election = c.election('from-send');
      const backend = await c.backend();
      const a = await c.elector(election, 'a', { backend });
      // Every answer reaches the Elector a quarter of a lease after the server gave it.
      backend.delayReplies(Math.floor(c.leaseMs / 4), ['campaign', 'renew']);
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      const samples = await checkDeadlines(a, backend, 3, c.leaseMs * 10);
      expect(samples).toBeGreaterThan(0);
      expect(a.isLeader()).toBe(true);
    });

    test('the deadline never exceeds a granted lease shorter than the one asked for', async () => {
      const c = ctx();
      const election = c.election('short-grant');
      const backend = await c.backend();
      const a = await c.elector(election, 'a', { backend });
      backend.capGrant(Math.floor(c.leaseMs / 2));
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      const samples = await checkDeadlines(a, backend, 3, c.leaseMs * 10);
      expect(samples).toBeGreaterThan(0);
      // Renewing often enough for the shorter lease, it leads throughout.
      expect(a.isLeader()).toBe(true);
      expect(a.state.reason).toBeUndefined();
    });

    test('a renewal answered after the deadline does not extend leadership', async () => {
      const c = ctx();
      const election = c.election('late-renewal');
      const backend = await c.backend();
      const a = await c.elector(election, 'a', { backend });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      const token = a.token!;
      await waitFor(() => backend.delivered('renew').some((call) => grantOf(call) !== null), 'a granted renewal', c.leaseMs * 10);
      // The server renews, but its answers are kept from the Elector past the deadline. The
      // revocation is caught as an event: the Elector may lead again in a new term right after
      // it (its own release frees the lease at once), so its state can move on before a poll.
      let expired = false;
      const revocations = a.revoked$.subscribe((e) => {
        if (e.token === token && e.reason === 'lease-expired') expired = true;
      });
      backend.holdReplies(['renew']);
      try {
        await waitFor(() => expired, 'a to be revoked at its deadline', c.leaseMs * 10);
      } finally {
        revocations.unsubscribe();
      }
      expect(a.isLeader() && a.token === token).toBe(false);
      // From here no call reaches the server; the kept answers (held: true) then arrive.
      backend.hang();
      const late = backend.calls.filter((call) => call.method === 'renew' && call.reachedServer && call.deliveredAt === undefined);
      expect(late.length).toBeGreaterThan(0);
      backend.releaseReplies();
      await waitFor(() => late.every((call) => call.deliveredAt !== undefined), 'the late answers to arrive');
      await new Promise((r) => setImmediate(r));
      // Not leading in that term (a new term of its own, after its release, is fine).
      expect([a.token === token, a.isLeader() && a.token! <= token]).toEqual([false, false]);
      expect(late.some((call) => (call.result as { held?: boolean } | undefined)?.held === true)).toBe(true);
      expect(checkSplitBrain(c.history.events).intervals.filter((iv) => iv.token === token && iv.endMs === Infinity)).toEqual([]);
    });

    // A stalled process can get a `held` answer after its deadline but before its deadline timer
    // runs: the term isLeader() already ended must not come back.
    test('a renewal answered after the deadline, before the deadline timer ran, does not extend leadership', async () => {
      const c = ctx();
      const election = c.election('late-renewal-busy');
      const backend = await c.backend();
      const a = await c.elector(election, 'a', { backend });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      // Keep the answer of a renewal sent well after the one the deadline counts from, so that
      // its grant, if taken, would still be running when it arrives.
      await waitFor(() => backend.delivered('renew').some((call) => grantOf(call) !== null), 'a granted renewal', c.leaseMs * 10);
      backend.holdReplies(['renew']);
      await waitFor(
        () => backend.calls.some((call) => call.method === 'renew' && call.reachedServer && call.answeredAt !== undefined && call.deliveredAt === undefined),
        'a renewal the server answered',
        c.leaseMs * 10,
      );
      const deadline = deadlineOf(a);
      expect(deadline).not.toBeNull();
      // Block the event loop past the deadline, then hand over the kept answer: no timer has run,
      // so only the Elector's handling of the answer can tell that it came too late.
      while (performance.now() < deadline! + 5) {
        // busy wait: a process stalled at the worst moment
      }
      const kept = backend.calls.filter((call) => call.method === 'renew' && call.answeredAt !== undefined && call.deliveredAt === undefined);
      const wouldRunUntil = Math.max(...kept.map((call) => call.sentAt + Math.min(grantOf({ ...call, deliveredAt: 0, result: call.answer }) ?? 0, a.options.leaseMs) - a.options.safetyMarginMs));
      expect(wouldRunUntil).toBeGreaterThan(performance.now());
      backend.hang();
      backend.releaseReplies();
      // Let the Elector handle the answer (promise callbacks only: no timer can run meanwhile).
      for (let i = 0; i < 200; i++) await Promise.resolve();
      expect(a.isLeader()).toBe(false);
      await waitFor(() => a.state.reason === 'lease-expired', 'a to be revoked', c.leaseMs * 10);
    });

    const longElector = (c: SuiteContext, election: string, id: string, backend: ControlledBackend, retryMs: number) =>
      c.elector(election, id, { backend, leaseMs: LONG_LEASE_MS, retryMs });

    test.each([
      ['stepDown()', async (a: Elector) => a.stepDown(), true],
      ['pause()', async (a: Elector) => a.pause(), false],
      ['stop()', async (a: Elector) => a.stop(), true],
    ] as const)('%s releases the lease at once: another candidate leads well within the lease', async (_name, end, releasedOnReturn) => {
      const c = ctx();
      const election = c.election('release');
      // a would campaign again only after 2 × its retryMs, past the bound below.
      const a = await longElector(c, election, 'a', await c.backend(), LONG_LEASE_MS / 5);
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', LONG_LEASE_MS);
      const b = await longElector(c, election, 'b', await c.backend(), 100);
      await b.start();
      await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', LONG_LEASE_MS);
      const admin = await c.backend();
      const endedAt = performance.now();
      await end(a);
      expect(a.isLeader()).toBe(false);
      if (releasedOnReturn) expect((await admin.getLeader(election))?.candidateId).not.toBe('a');
      // Without a release, a's lease would keep b out for more than half a lease from here.
      const bound = LONG_LEASE_MS / 4;
      await waitFor(async () => (await admin.getLeader(election))?.candidateId !== 'a', 'the lease to be released', bound);
      await waitFor(() => b.isLeader(), 'b to lead', bound - (performance.now() - endedAt));
      expect(checkSplitBrain(c.history.events).overlaps).toEqual([]);
    });

    test.each(ENDINGS.map((e) => [e.name, e] as const))(
      'whileLeader\'s signal aborts when the term ends by %s',
      async (_name, ending) => {
        const c = ctx();
        const election = c.election('abort');
        const aBackend = await c.backend();
        const a = await c.elector(election, 'a', { backend: aBackend });
        const term = nextTermSignal(a);
        await a.start();
        const { token, signal } = await term;
        expect(a.token).toBe(token);
        const b = await c.elector(election, 'b');
        await b.start();
        await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', c.leaseMs * 10);

        let abortedAtRevoke: boolean | null = null;
        let revokedFor: RevokeReason | null = null;
        let abortedWhenNextTermStarted: boolean | null = null;
        let leadingAtAbort: boolean | null = null;
        a.revoked$.subscribe((e) => {
          if (e.token !== token) return;
          abortedAtRevoke = signal.aborted;
          revokedFor = e.reason;
        });
        for (const e of [a, b]) {
          e.elected$.subscribe((ev) => {
            if (ev.token > token) abortedWhenNextTermStarted ??= signal.aborted;
          });
        }
        let abortBeforeDeadline: boolean | null = null;
        signal.addEventListener('abort', () => {
          leadingAtAbort = a.isLeader();
          abortBeforeDeadline = performance.now() < allowedDeadline(a, aBackend);
        });

        await ending.end({ c, a, aBackend, election });
        if (ending.atOnce) expect(signal.aborted).toBe(true);
        await waitFor(() => signal.aborted, 'the signal to abort', c.leaseMs * 10);
        expect(revokedFor).toBe(ending.reason);
        expect(abortedAtRevoke).toBe(true);
        expect(leadingAtAbort).toBe(false);
        // Every ending but the deadline itself aborts while the lease still runs.
        if (ending.reason !== 'lease-expired') expect(abortBeforeDeadline).toBe(true);
        expect(isConclaveError(signal.reason, 'LEASE_LOST')).toBe(true);
        // Whoever leads next, a's signal had aborted by then.
        await waitFor(() => abortedWhenNextTermStarted !== null, 'a next term', c.leaseMs * 20);
        expect(abortedWhenNextTermStarted).toBe(true);
      },
    );

    /**
     * `a` leads, then freezes the moment a renewal is granted, so that lease runs its full length
     * on the server. Resolves once every call `a` sent has been answered, with when the server's
     * lease ends at the earliest: the send of `a`'s last granted call plus the grant.
     */
    const leadThenFreezeAtGrantedRenewal = async (c: ReturnType<typeof ctx>, election: string) => {
      const aBackend = await c.backend();
      const a = await c.elector(election, 'a', { backend: aBackend });
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      const aToken = a.token!;
      aBackend.hangAfter((call) => call.method === 'renew' && grantOf({ ...call, result: call.answer }) !== null);
      await waitFor(() => aBackend.isHanging, 'a granted renewal', c.leaseMs * 10);
      await c.freeze(aBackend);
      await waitFor(
        () => aBackend.calls.every((call) => !call.reachedServer || call.deliveredAt !== undefined),
        'the calls a sent before the freeze to be answered',
        c.leaseMs * 10,
      );
      let leaseEnd = -Infinity;
      for (const call of aBackend.calls) {
        const granted = grantOf(call);
        if (granted !== null) leaseEnd = Math.max(leaseEnd, call.sentAt + granted);
      }
      return { aToken, leaseEnd };
    };

    /** `b` campaigns without pause until it wins: when it won, with which token, and its last refusal. */
    const campaignUntilWon = async (c: ReturnType<typeof ctx>, b: ControlledBackend, election: string) => {
      let won: { repliedAt: number; token: number } | null = null;
      let lastRefusalAt = -Infinity;
      const giveUpAt = performance.now() + c.leaseMs * 20 + 30_000;
      while (!won) {
        const result = await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs });
        const repliedAt = performance.now();
        if (result.role === 'leader') won = { repliedAt, token: result.token };
        else {
          lastRefusalAt = repliedAt;
          if (repliedAt > giveUpAt) throw new Error('b never got the lease');
          await new Promise((r) => setImmediate(r));
        }
      }
      return { won, lastRefusalAt };
    };

    test('the server never hands the lease to another candidate before it ends', async () => {
      const c = ctx();
      const election = c.election('no-early');
      const { aToken, leaseEnd } = await leadThenFreezeAtGrantedRenewal(c, election);
      const b = await c.backend();
      // b campaigns without pause from now, through the end of the lease.
      const { won, lastRefusalAt } = await campaignUntilWon(c, b, election);
      expect(won.repliedAt).toBeGreaterThanOrEqual(leaseEnd);
      expect(won.token).toBeGreaterThan(aToken);
      // b was refused in the lease's last stretch: it did try early.
      expect(lastRefusalAt).toBeGreaterThan(leaseEnd - c.leaseMs / 4);
      await b.release({ election, candidateId: 'b' });
    });

    const adminEndings = [
      ['forceLeader()', (admin: ControlledBackend, election: string) => admin.forceLeader(election, 'b').then(() => undefined)],
      ['clearLeader()', (admin: ControlledBackend, election: string) => admin.clearLeader(election)],
    ] as const;

    // forceLeader/clearLeader revoke the lease at once; its holder learns at its next renewal,
    // and no new term starts before the revoked lease could have ended on the server, which is
    // after the old leader's deadline. So the two terms never overlap.
    test.each(adminEndings)('%s ends the old leader\'s term: at no point do two Electors report leading', async (_name, act) => {
      const c = ctx();
      const election = c.election('admin-end');
      const aBackend = await c.backend();
      const a = await c.elector(election, 'a', { backend: aBackend });
      const b = await c.elector(election, 'b');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
      const aToken = a.token!;
      await b.start();
      await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', c.leaseMs * 10);
      const both: string[] = [];
      let samples = 0;
      const check = () => {
        samples++;
        if (a.isLeader() && b.isLeader()) both.push(`a ${a.token}, b ${b.token}`);
      };
      const subs = [a, b].map((e) => e.state$.subscribe(check));
      const sampler = setInterval(check, 1);
      let revokedAt: number | null = null;
      let reason: RevokeReason | null = null;
      a.revoked$.subscribe((e) => {
        if (e.token !== aToken) return;
        revokedAt = performance.now();
        reason = e.reason;
      });
      const admin = await c.backend();
      // a hears back from the server a quarter of a lease late (its deadline still counts from
      // the send): had the next term started at once, b would lead before a learns its term ended.
      aBackend.delayReplies(Math.floor(c.leaseMs / 4), ['renew']);
      let actedAt = Infinity;
      let newTermAt = Infinity;
      // The old lease ends at most one lease after the call; the new term starts then, plus the
      // time a follower takes to look again (a poll, at most retryMs) and a slow machine's slack.
      const bound = 2 * c.leaseMs + 2000;
      try {
        check();
        actedAt = performance.now();
        await act(admin, election);
        await waitFor(() => revokedAt !== null, 'a\'s term to end', bound);
        await waitFor(() => [a, b].some((e) => e.isLeader() && e.token! > aToken), 'a new term', bound);
        newTermAt = performance.now();
        check();
      } finally {
        clearInterval(sampler);
        subs.forEach((s) => s.unsubscribe());
      }
      expect(both).toEqual([]);
      expect(samples).toBeGreaterThan(10);
      expect(reason).toBe('lease-lost');
      // What ended the term was a refused renewal (a hint may have made a renew early).
      const renewals = aBackend.calls.filter(
        (call) => call.method === 'renew' && call.deliveredAt !== undefined && (call.args[0] as { token: number }).token === aToken,
      );
      const refusal = renewals.filter((call) => call.deliveredAt! <= revokedAt!).pop();
      expect((refusal?.result as { held?: boolean } | undefined)?.held).toBe(false);
      expect(revokedAt! - refusal!.deliveredAt!).toBeLessThan(c.leaseMs / 10);
      expect(newTermAt - actedAt).toBeLessThan(bound);
      expect(checkSplitBrain(c.history.events).tokenRegressions).toEqual([]);
      expect(checkSplitBrain(c.history.events).overlaps).toEqual([]);
    });

    // The same at the backend: after the admin call, a follower campaigning without pause does
    // not get the lease before the revoked one ends, even though its holder went silent and can
    // no longer be told.
    test.each(adminEndings)('after %s the server hands the lease on only once the revoked lease ended', async (_name, act) => {
      const c = ctx();
      const election = c.election('admin-no-early');
      const { aToken, leaseEnd } = await leadThenFreezeAtGrantedRenewal(c, election);
      const b = await c.backend();
      // b is a candidate (ZooKeeper can only force one that campaigns) before the admin call.
      expect((await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs })).role).toBe('follower');
      const admin = await c.backend();
      const acted = act(admin, election);
      let outcome: Awaited<ReturnType<typeof campaignUntilWon>>;
      try {
        outcome = await campaignUntilWon(c, b, election);
      } finally {
        await acted;
      }
      expect(outcome.won.repliedAt).toBeGreaterThanOrEqual(leaseEnd);
      expect(outcome.won.token).toBeGreaterThan(aToken);
      expect(outcome.lastRefusalAt).toBeGreaterThan(leaseEnd - c.leaseMs / 4);
      await b.release({ election, candidateId: 'b' });
    });

    const pushTest = push !== 'none' ? test : test.skip;
    pushTest(
      push !== 'none'
        ? `a release wakes a watching follower at once (push: ${push}), long before a poll`
        : 'push wake-up (skipped: the backend declares push: none)',
      async () => {
        const c = ctx();
        const election = c.election('push');
        const a = await c.elector(election, 'a', { leaseMs: LONG_LEASE_MS, retryMs: LONG_LEASE_MS / 2 });
        await a.start();
        await waitFor(() => a.isLeader(), 'a to lead', LONG_LEASE_MS);
        const bBackend = await c.backend();
        const b = await c.elector(election, 'b', { backend: bBackend, leaseMs: LONG_LEASE_MS, retryMs: LONG_LEASE_MS / 2 });
        await b.start();
        await waitFor(() => candidateOfNullable(b.state.leaderId) === 'a', 'b to see a lead', LONG_LEASE_MS);
        if (bBackend.isWatching) await waitFor(() => bBackend.isWatching!(election, b.instanceId), 'b\'s watch to be up', LONG_LEASE_MS);
        const stoppedAt = performance.now();
        await a.stop();
        // b's next look without push: a poll at retryMs (half a lease) or the lease's end.
        await waitFor(() => b.isLeader(), 'b to be woken', LONG_LEASE_MS / 4);
        expect(performance.now() - stoppedAt).toBeLessThan(LONG_LEASE_MS / 4);
      },
    );

    test('every declared capability is one the suite knows and tests', async () => {
      const c = ctx();
      const backend = await c.backend();
      expect(backend.capabilities).toEqual(capabilities);
      // Each capability the suite knows is exercised by a test of its own (admin operations,
      // token floor, push above; tokenClock, a declaration that tokens may jump, by 'tokens
      // strictly increase across many terms'; leaderPush by the watchLeader group; leaderMetadata,
      // field by field, by the leader metadata group); a capability it does not know would go
      // untested.
      const known = ['listCandidates', 'push', 'tokenFloor', 'tokenClock', 'leaderPush', 'leaderMetadata'];
      expect(Object.keys(capabilities).filter((k) => !known.includes(k))).toEqual([]);
      // Whether each method agrees with its capability: the capabilities group, first of all.
    });
  });
}
