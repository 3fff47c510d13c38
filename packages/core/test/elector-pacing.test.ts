/**
 * The Elector's pacing rules, one table per rule: each row a situation (a snapshot and the time)
 * and the decision expected. The rules are pure, so no timer, real or fake, runs here.
 */
import {
  MIN_RETRY_MS,
  afterRenewFailed,
  afterRenewed,
  afterStaleTerm,
  afterStepDown,
  campaignBackoff,
  campaignTimeoutMs,
  judgeGrant,
  leaseDeadline,
  leaseEndWaitsForLook,
  mustStepDown,
  nextCampaign,
  nextRenewal,
  nextSlot,
  onChangePushed,
  onLeaseEndLookDue,
  onLeaseEndPushed,
  renewInterval,
  renewTimeoutMs,
  stepDownHoldOffUntil,
  usableLeaseMs,
  type FollowerSnapshot,
  type PacingDecision,
  type PacingOptions,
} from '../src/elector-pacing';

const options: PacingOptions = { leaseMs: 10_000, renewMs: 3_000, retryMs: 2_000, safetyMarginMs: 200 };

/** When a decision's step runs, on the monotonic timeline; undefined when none is scheduled. */
function stepAt(nowMs: number, d: PacingDecision): number | undefined {
  if ('slotMs' in d) return d.slotMs;
  if ('delayMs' in d) return nowMs + d.delayMs;
  return undefined;
}

describe('leader: when the next renewal comes (nextRenewal)', () => {
  test.each([
    {
      name: 'on the next slot of the renew grid when it comes before halfway to the deadline',
      s: { nowMs: 5_000, deadlineMs: 14_800, renewEveryMs: 1_000 },
      expected: { action: 'renew', slotMs: 6_000 },
    },
    {
      name: 'standing on a slot, the next slot rather than this one',
      s: { nowMs: 6_000, deadlineMs: 14_800, renewEveryMs: 1_000 },
      expected: { action: 'renew', slotMs: 7_000 },
    },
    {
      name: 'a slot exactly halfway to the deadline is still taken',
      s: { nowMs: 5_000, deadlineMs: 7_000, renewEveryMs: 1_000 },
      expected: { action: 'renew', slotMs: 6_000 },
    },
    {
      name: 'off the grid, halfway to the deadline, when the next slot lies past halfway',
      s: { nowMs: 5_000, deadlineMs: 6_000, renewEveryMs: 3_000 },
      expected: { action: 'renew', delayMs: 500 },
    },
    {
      name: 'off the grid no sooner than MIN_RETRY_MS when the deadline is very near',
      s: { nowMs: 5_000, deadlineMs: 5_014, renewEveryMs: 3_000 },
      expected: { action: 'renew', delayMs: MIN_RETRY_MS },
    },
  ])('$name', ({ s, expected }) => {
    expect(nextRenewal(s)).toEqual(expected);
  });

  // Deadline edge: with room for the MIN_RETRY_MS floor, the renewal always falls before the
  // deadline, at most halfway there, whatever the grid.
  const situations = [20, 21, 99, 1_000, 1_999, 2_000, 9_800].flatMap((leftMs) =>
    [10, 1_000, 3_000].flatMap((renewEveryMs) =>
      [0, 1, 4_999.5, 123_456.25].map((nowMs) => ({ nowMs, deadlineMs: nowMs + leftMs, renewEveryMs })),
    ),
  );
  test.each(situations)(
    'renewal never scheduled after the local deadline: now $nowMs, deadline $deadlineMs, grid $renewEveryMs',
    (s) => {
      const at = stepAt(s.nowMs, nextRenewal(s))!;
      expect(at).toBeGreaterThan(s.nowMs);
      expect(at).toBeLessThanOrEqual(s.nowMs + (s.deadlineMs - s.nowMs) / 2);
      expect(at).toBeLessThan(s.deadlineMs);
    },
  );

  test.each([
    { leftMs: 1 },
    { leftMs: 5 },
    { leftMs: 10 },
  ])(
    'with $leftMs ms left the MIN_RETRY_MS wake-up lands at or past the deadline, where the step must step down instead of renewing',
    ({ leftMs }) => {
      const s = { nowMs: 5_000, deadlineMs: 5_000 + leftMs, renewEveryMs: 3_000 };
      const at = stepAt(s.nowMs, nextRenewal(s))!;
      expect(at).toBeGreaterThanOrEqual(s.deadlineMs);
      expect(mustStepDown(at, s.deadlineMs)).toBe(true);
    },
  );
});

describe('leader: step down at the deadline (mustStepDown)', () => {
  test.each([
    { name: 'still leads 1 ms before the deadline', nowMs: 9_999, expected: false },
    { name: 'still leads a fraction of a ms before the deadline', nowMs: 9_999.999, expected: false },
    { name: 'steps down exactly at the deadline', nowMs: 10_000, expected: true },
    { name: 'steps down past the deadline', nowMs: 10_250, expected: true },
  ])('$name', ({ nowMs, expected }) => {
    expect(mustStepDown(nowMs, 10_000)).toBe(expected);
  });
});

describe('leader: after a failed renewal (afterRenewFailed)', () => {
  test.each([
    {
      name: 'retries at retryMs when a third of what is left is longer',
      s: { nowMs: 1_000, deadlineMs: 10_000 },
      expected: { action: 'renew', delayMs: 2_000 },
    },
    {
      name: 'retries at a third of what is left when that is sooner than retryMs',
      s: { nowMs: 1_000, deadlineMs: 4_000 },
      expected: { action: 'renew', delayMs: 1_000 },
    },
    {
      name: 'retries no sooner than MIN_RETRY_MS',
      s: { nowMs: 1_000, deadlineMs: 1_015 },
      expected: { action: 'renew', delayMs: MIN_RETRY_MS },
    },
    {
      name: 'still retries 1 ms before the deadline',
      s: { nowMs: 3_999, deadlineMs: 4_000 },
      expected: { action: 'renew', delayMs: MIN_RETRY_MS },
    },
    { name: 'steps down at the deadline', s: { nowMs: 4_000, deadlineMs: 4_000 }, expected: { action: 'step-down' } },
    { name: 'steps down past the deadline', s: { nowMs: 4_500, deadlineMs: 4_000 }, expected: { action: 'step-down' } },
  ])('$name', ({ s, expected }) => {
    expect(afterRenewFailed(s, options)).toEqual(expected);
  });
});

describe('leader: after a confirmed renewal (afterRenewed)', () => {
  test.each([
    {
      name: 'a full grant moves the deadline to sent-at + lease − margin and keeps renewMs',
      s: { sentAtMs: 1_000, grantedMs: 10_000, deadlineMs: 9_000 },
      expected: { deadlineMs: 10_800, extended: true, renewEveryMs: 3_000 },
    },
    {
      name: 'a grant longer than asked counts only as long as asked',
      s: { sentAtMs: 1_000, grantedMs: 60_000, deadlineMs: 9_000 },
      expected: { deadlineMs: 10_800, extended: true, renewEveryMs: 3_000 },
    },
    {
      name: 'a shorter grant (a short ZooKeeper session) shortens the deadline and renews at half its usable part',
      s: { sentAtMs: 1_000, grantedMs: 4_000, deadlineMs: 4_000 },
      expected: { deadlineMs: 4_800, extended: true, renewEveryMs: 1_900 },
    },
    {
      name: 'the deadline never moves back when the new one is earlier',
      s: { sentAtMs: 1_000, grantedMs: 4_000, deadlineMs: 6_000 },
      expected: { deadlineMs: 6_000, extended: false, renewEveryMs: 1_900 },
    },
    {
      name: 'an equal deadline is not an extension',
      s: { sentAtMs: 1_000, grantedMs: 10_000, deadlineMs: 10_800 },
      expected: { deadlineMs: 10_800, extended: false, renewEveryMs: 3_000 },
    },
  ])('$name', ({ s, expected }) => {
    expect(afterRenewed(s, options)).toEqual(expected);
  });
});

describe('leader: renew interval for a grant (renewInterval)', () => {
  test.each([
    { name: 'renewMs when the grant is as long as asked', usableMs: 10_000, expected: 3_000 },
    { name: 'half the usable part, rounded down to 10 ms, when that is shorter', usableMs: 4_015, expected: 1_900 },
    { name: 'never below MIN_RETRY_MS for a grant no longer than the margin', usableMs: 210, expected: MIN_RETRY_MS },
  ])('$name', ({ usableMs, expected }) => {
    expect(renewInterval(usableMs, options)).toBe(expected);
  });
});

describe('follower: when the next campaign comes (nextCampaign)', () => {
  const base: FollowerSnapshot = {
    nowMs: 10_000,
    push: 'none',
    watching: false,
    namedSelf: false,
    holdOffUntilMs: 0,
  };
  test.each<{ name: string; s: Partial<FollowerSnapshot>; expected: PacingDecision }>([
    {
      name: 'without push and without a hint, polls at retryMs on the poll grid',
      s: {},
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'without push, wakes 1 ms after the current lease can end when that is sooner than retryMs',
      s: { leaseRemainingMs: 500 },
      expected: { action: 'campaign', slotMs: 10_510 },
    },
    {
      name: 'without push, polls at retryMs when the current lease runs longer',
      s: { leaseRemainingMs: 5_000 },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'a lease that already ended on the server: looks again at once (next grid slot)',
      s: { leaseRemainingMs: -300 },
      expected: { action: 'campaign', slotMs: 10_010 },
    },
    {
      name: 'rounds up to the poll grid',
      s: { nowMs: 10_003 },
      expected: { action: 'campaign', slotMs: 12_010 },
    },
    {
      name: 'with reliable push and no hint, arms nothing and waits for a pushed change',
      s: { push: 'reliable', watching: true },
      expected: { action: 'wait-for-push' },
    },
    {
      name: 'with reliable push, still wakes when the current lease can end (a crashed leader pushes nothing)',
      s: { push: 'reliable', watching: true, leaseRemainingMs: 5_000 },
      expected: { action: 'campaign', slotMs: 15_010 },
    },
    {
      name: 'with best-effort push and no hint, falls back to polling at retryMs',
      s: { push: 'best-effort', watching: true },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'with best-effort push and a hint, trusts the hint beyond retryMs',
      s: { push: 'best-effort', watching: true, leaseRemainingMs: 5_000 },
      expected: { action: 'campaign', slotMs: 15_010 },
    },
    {
      name: 'reliable push whose watch is down (isWatching false) polls at retryMs like no push',
      s: { push: 'reliable', watching: false },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'reliable push whose watch is down caps a long hint at retryMs',
      s: { push: 'reliable', watching: false, leaseRemainingMs: 5_000 },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'a hold-off longer than the poll delays the campaign to its end',
      s: { holdOffUntilMs: 13_000 },
      expected: { action: 'campaign', slotMs: 13_000 },
    },
    {
      name: 'a hold-off shorter than the poll changes nothing',
      s: { holdOffUntilMs: 11_000 },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'with reliable push and a hold-off, wakes when the hold-off ends instead of waiting for a push',
      s: { push: 'reliable', watching: true, holdOffUntilMs: 10_400 },
      expected: { action: 'campaign', slotMs: 10_400 },
    },
    {
      name: 'a hold-off that has passed is ignored',
      s: { push: 'reliable', watching: true, holdOffUntilMs: 9_000 },
      expected: { action: 'wait-for-push' },
    },
    {
      name: 'a backend naming this instance leader without a lease: looks again at retryMs on a timer of its own',
      s: { namedSelf: true, push: 'reliable', watching: true, holdOffUntilMs: 15_000 },
      expected: { action: 'campaign', delayMs: 2_000 },
    },
  ])('$name', ({ s, expected }) => {
    expect(nextCampaign({ ...base, ...s }, options)).toEqual(expected);
  });
});

describe('follower: backoff after a failed campaign (campaignBackoff)', () => {
  test.each([
    { name: 'first failure: retryMs, jittered down to half at the lowest draw', failures: 1, jitter: 0, expected: 1_000 },
    { name: 'first failure: three quarters of retryMs at the middle draw', failures: 1, jitter: 0.5, expected: 1_500 },
    { name: 'second failure doubles the base', failures: 2, jitter: 0, expected: 2_000 },
    { name: 'third failure doubles it again', failures: 3, jitter: 0, expected: 4_000 },
    { name: 'the base stops at leaseMs', failures: 4, jitter: 0, expected: 5_000 },
    { name: 'the base stays at leaseMs for many failures', failures: 40, jitter: 0.5, expected: 7_500 },
    { name: 'a late grant after an answered call (0 failures) backs off half a retryMs', failures: 0, jitter: 0, expected: 500 },
  ])('$name', ({ failures, jitter, expected }) => {
    expect(campaignBackoff({ failures, jitter }, options)).toEqual({ action: 'campaign', delayMs: expected });
  });

  test.each([
    {
      name: 'the doubling stops after 2^10 even when leaseMs would allow more',
      failures: 20,
      o: { retryMs: 1, leaseMs: 1_000_000 },
      jitter: 0,
      expected: 512,
    },
    { name: 'never sooner than MIN_RETRY_MS', failures: 1, o: { retryMs: 4, leaseMs: 1_000 }, jitter: 0, expected: MIN_RETRY_MS },
    {
      name: 'a retryMs above leaseMs is not cut down to leaseMs',
      failures: 1,
      o: { retryMs: 2_000, leaseMs: 1_000 },
      jitter: 0.5,
      expected: 1_500,
    },
  ])('$name', ({ failures, o, jitter, expected }) => {
    expect(campaignBackoff({ failures, jitter }, o)).toEqual({ action: 'campaign', delayMs: expected });
  });
});

describe('follower: what a won campaign allows (judgeGrant)', () => {
  test.each([
    { name: 'a first term with time left: lead', s: { nowMs: 1_000, token: 7, lastToken: null, deadlineMs: 9_000 }, expected: 'lead' },
    { name: 'a greater token than the last led: lead', s: { nowMs: 1_000, token: 8, lastToken: 7, deadlineMs: 9_000 }, expected: 'lead' },
    { name: 'the token already led with: a stale term', s: { nowMs: 1_000, token: 7, lastToken: 7, deadlineMs: 9_000 }, expected: 'stale-term' },
    { name: 'a lower token: a stale term', s: { nowMs: 1_000, token: 3, lastToken: 7, deadlineMs: 9_000 }, expected: 'stale-term' },
    { name: 'granted exactly at its deadline: too late', s: { nowMs: 9_000, token: 8, lastToken: 7, deadlineMs: 9_000 }, expected: 'too-late' },
    { name: 'granted past its deadline: too late', s: { nowMs: 9_500, token: 8, lastToken: null, deadlineMs: 9_000 }, expected: 'too-late' },
    { name: 'a stale term counts before lateness', s: { nowMs: 9_500, token: 7, lastToken: 7, deadlineMs: 9_000 }, expected: 'stale-term' },
  ])('$name', ({ s, expected }) => {
    expect(judgeGrant(s)).toBe(expected);
  });

  test.each([
    { name: 'after a stale term, campaigns again at MIN_RETRY_MS once the token floor was raised', canRaiseTokenFloor: true, expected: MIN_RETRY_MS },
    { name: 'after a stale term, campaigns again at retryMs when the floor cannot be raised', canRaiseTokenFloor: false, expected: 2_000 },
  ])('$name', ({ canRaiseTokenFloor, expected }) => {
    expect(afterStaleTerm({ canRaiseTokenFloor }, options)).toEqual({ action: 'campaign', delayMs: expected });
  });
});

describe('a pushed lease end (onLeaseEndPushed)', () => {
  type Snapshot = Parameters<typeof onLeaseEndPushed>[0];
  const base: Snapshot = {
    role: 'follower',
    nowMs: 10_000,
    leaseRemainingMs: 3_000,
    push: 'best-effort',
    watching: true,
    leaseEndLook: true,
    holdOffUntilMs: 0,
  };
  test.each<{ name: string; s: Partial<Snapshot>; expected: PacingDecision | null }>([
    {
      name: 'a follower looking at the lease end moves its look to the end pushed, past retryMs while its push is live',
      s: {},
      expected: { action: 'campaign', slotMs: 13_010 },
    },
    {
      name: 'an expiry pushed (0 left) makes the follower campaign on the next poll slot',
      s: { leaseRemainingMs: 0 },
      expected: { action: 'campaign', slotMs: 10_010 },
    },
    {
      name: 'with its push not live, the follower still looks no later than retryMs',
      s: { watching: false },
      expected: { action: 'campaign', slotMs: 12_000 },
    },
    {
      name: 'a follower holding off after stepping down still waits for the hold-off',
      s: { leaseRemainingMs: 100, holdOffUntilMs: 14_000 },
      expected: { action: 'campaign', slotMs: 14_000 },
    },
    {
      name: 'a follower whose next campaign is for another reason (a backoff, a record naming itself) keeps its timer',
      s: { leaseEndLook: false },
      expected: null,
    },
    { name: 'a leader keeps its renewal timer', s: { role: 'leader' }, expected: null },
  ])('$name', ({ s, expected }) => {
    expect(onLeaseEndPushed({ ...base, ...s }, options)).toEqual(expected);
  });

  test('renewals pushed every renew interval keep a follower from ever campaigning while the push is live', () => {
    // Renewals every 1 000 ms of a 3 000 ms lease: each moves the look 3 s ahead of the push.
    for (let nowMs = 10_000; nowMs < 70_000; nowMs += 1_000) {
      const next = onLeaseEndPushed({ ...base, nowMs }, options)!;
      expect(stepAt(nowMs, next)).toBeGreaterThan(nowMs + 1_000);
    }
  });
});

describe('a pushed lease end kept for the look (leaseEndWaitsForLook, onLeaseEndLookDue)', () => {
  test.each([
    { name: 'a renewal pushed (an end later than the look) waits for the look', s: { nowMs: 10_000, leaseRemainingMs: 3_000, lookAtMs: 12_010 }, expected: true },
    { name: 'an end on the look slot itself waits (the look is unchanged)', s: { nowMs: 10_000, leaseRemainingMs: 2_000, lookAtMs: 12_010 }, expected: true },
    { name: 'an end sooner than the look cannot wait', s: { nowMs: 10_000, leaseRemainingMs: 1_000, lookAtMs: 12_010 }, expected: false },
    { name: 'an expiry pushed (0 left) cannot wait', s: { nowMs: 10_000, leaseRemainingMs: 0, lookAtMs: 12_010 }, expected: false },
  ])('$name', ({ s, expected }) => {
    expect(leaseEndWaitsForLook(s)).toBe(expected);
  });

  type Snapshot = Parameters<typeof onLeaseEndLookDue>[0];
  const due: Snapshot = { nowMs: 13_010, pushedEndMs: 15_000, push: 'best-effort', watching: true, holdOffUntilMs: 0 };
  test.each<{ name: string; s: Partial<Snapshot>; expected: PacingDecision | null }>([
    { name: 'a later end kept: the look moves there, as if moved when it was pushed', s: {}, expected: { action: 'campaign', slotMs: 15_010 } },
    { name: 'the end kept is the one looked at: look now', s: { pushedEndMs: 13_000 }, expected: null },
    { name: 'an end kept that has passed: look now', s: { pushedEndMs: 12_000 }, expected: null },
    { name: 'with its push not live, the moved look still comes within retryMs', s: { pushedEndMs: 20_000, watching: false }, expected: { action: 'campaign', slotMs: 15_010 } },
  ])('$name', ({ s, expected }) => {
    expect(onLeaseEndLookDue({ ...due, ...s }, options)).toEqual(expected);
  });

  test('renewals kept between looks move the look to where pushing each would have, with one re-arm per look', () => {
    // A renewal every 1 000 ms of a 3 000 ms lease; the look fires at the lease end it names.
    const base = { push: 'best-effort' as const, watching: true, holdOffUntilMs: 0 };
    let lookAtMs = stepAt(10_000, onLeaseEndPushed({ ...base, role: 'follower', leaseEndLook: true, nowMs: 10_000, leaseRemainingMs: 3_000 }, options)!)!;
    let rearms = 0;
    let kept: number | null = null;
    for (let nowMs = 10_000; nowMs < 70_000; nowMs += 10) {
      if (nowMs % 1_000 === 0) {
        expect(leaseEndWaitsForLook({ nowMs, leaseRemainingMs: 3_000, lookAtMs })).toBe(true);
        kept = nowMs + 3_000;
      }
      if (nowMs === lookAtMs) {
        const next = onLeaseEndLookDue({ ...base, nowMs, pushedEndMs: kept! }, options);
        expect(next).not.toBeNull();
        lookAtMs = stepAt(nowMs, next!)!;
        expect(lookAtMs).toBe(kept! + 10);
        kept = null;
        rearms++;
      }
    }
    // Simulated time, not this machine's: 60 s of renewals every 1 000 ms. The look fires once
    // per lease end it reaches (at most one per 3 000 ms lease after the first: about 20); a
    // re-arm at each renewal pushed would be 60. 30 tells the two apart.
    expect(rearms).toBeLessThanOrEqual(30);
  });
});

describe('pushed changes and stepping down (onChangePushed, hold-off)', () => {
  test.each<{ name: string; s: Parameters<typeof onChangePushed>[0]; expected: PacingDecision }>([
    { name: 'a follower campaigns at once', s: { role: 'follower', nowMs: 1_000, holdOffUntilMs: 0 }, expected: { action: 'campaign', delayMs: 0 } },
    {
      name: 'a follower holding off waits for the hold-off to end',
      s: { role: 'follower', nowMs: 1_000, holdOffUntilMs: 1_300 },
      expected: { action: 'campaign', delayMs: 300 },
    },
    {
      name: 'a follower whose hold-off has passed campaigns at once',
      s: { role: 'follower', nowMs: 1_000, holdOffUntilMs: 900 },
      expected: { action: 'campaign', delayMs: 0 },
    },
    {
      name: 'a leader renews at once, hold-off or not',
      s: { role: 'leader', nowMs: 1_000, holdOffUntilMs: 1_300 },
      expected: { action: 'renew', delayMs: 0 },
    },
  ])('$name', ({ s, expected }) => {
    expect(onChangePushed(s)).toEqual(expected);
  });

  test('stepping down holds off for two retryMs', () => {
    expect(stepDownHoldOffUntil(1_000, options)).toBe(5_000);
  });

  test.each([
    { name: 'after the release, campaigns when the hold-off ends', nowMs: 3_000, expected: 2_000 },
    { name: 'after a release that outlasted the hold-off, campaigns at once', nowMs: 6_000, expected: 0 },
  ])('$name', ({ nowMs, expected }) => {
    expect(afterStepDown({ nowMs, holdOffUntilMs: 5_000 })).toEqual({ action: 'campaign', delayMs: expected });
  });
});

describe('lease arithmetic and call timeouts', () => {
  test.each([
    { name: 'the usable lease is what the server granted when shorter than asked', grantedMs: 4_000, expected: 4_000 },
    { name: 'the usable lease is what was asked when the server granted more', grantedMs: 30_000, expected: 10_000 },
  ])('$name', ({ grantedMs, expected }) => {
    expect(usableLeaseMs(grantedMs, options.leaseMs)).toBe(expected);
  });

  test('the deadline counts from when the call was sent, less the safety margin', () => {
    expect(leaseDeadline(1_000, 10_000, 200)).toBe(10_800);
  });

  test('a campaign is given the lease less the margin to answer', () => {
    expect(campaignTimeoutMs(options)).toBe(9_800);
  });

  test.each([
    { name: 'a renewal is given until the deadline to answer', sentAtMs: 1_000, expected: 3_000 },
    { name: 'a renewal sent at the deadline is given 1 ms, not 0 or less', sentAtMs: 4_000, expected: 1 },
  ])('$name', ({ sentAtMs, expected }) => {
    expect(renewTimeoutMs(sentAtMs, 4_000)).toBe(expected);
  });

  test.each([
    { name: 'the next slot at least the delay away', nowMs: 1_234, minDelayMs: 100, gridMs: 10, expected: 1_340 },
    { name: 'a slot exactly the delay away is taken', nowMs: 1_230, minDelayMs: 100, gridMs: 10, expected: 1_330 },
    { name: 'fractional times round up', nowMs: 1_229.5, minDelayMs: 100, gridMs: 10, expected: 1_330 },
  ])('grid: $name', ({ nowMs, minDelayMs, gridMs, expected }) => {
    expect(nextSlot(nowMs, minDelayMs, gridMs)).toBe(expected);
  });
});
