import type { Delivery } from './backend';

/**
 * When an Elector calls its backend next, as pure functions of a plain snapshot of its state and
 * the current time. The Elector reads the clock, asks these functions, and arms the timer the
 * answer names; nothing here reads a clock, sets a timer or talks to a backend, so every rule can
 * be checked from a table.
 *
 * Times are milliseconds on the monotonic (performance.now()) timeline: `...AtMs`, `nowMs`,
 * `deadlineMs` and `slotMs` are instants on it, `...Ms` alone a duration.
 */

/** The shortest wait before calling a backend again, so a failing one is not hammered. */
export const MIN_RETRY_MS = 10;
/** Follower polls round up to this grid so that Electors sharing a backend poll in one turn. */
export const POLL_GRID_MS = 10;

/** The options pacing depends on (a `ResolvedElectorOptions` fits). */
export interface PacingOptions {
  leaseMs: number;
  renewMs: number;
  retryMs: number;
  safetyMarginMs: number;
}

/** The step the Elector takes when the timer fires: campaign as follower, renew as leader. */
export type StepAction = 'campaign' | 'renew';

/** What to do next, and when. */
export type PacingDecision =
  /** Take the step after `delayMs`, on a timer of its own. */
  | { action: StepAction; delayMs: number }
  /** Take the step at `slotMs`, a grid slot shared with other Electors so their calls batch. */
  | { action: StepAction; slotMs: number }
  /** Arm nothing: the backend pushes every change, and the next one wakes us. */
  | { action: 'wait-for-push' }
  /** The lease is over on our clock: end the term now. */
  | { action: 'step-down' };

/** The first slot of a `gridMs` grid at least `minDelayMs` after `nowMs`. */
export function nextSlot(nowMs: number, minDelayMs: number, gridMs: number): number {
  return Math.ceil((nowMs + minDelayMs) / gridMs) * gridMs;
}

/**
 * Whether a leader must stop acting as one. At the deadline itself it already must: the deadline
 * is the last instant the server can still count on our lease, less the safety margin.
 */
export function mustStepDown(nowMs: number, deadlineMs: number): boolean {
  return nowMs >= deadlineMs;
}

/** The part of a granted lease we rely on: never more than we asked for. */
export function usableLeaseMs(grantedMs: number, leaseMs: number): number {
  return Math.min(grantedMs, leaseMs);
}

/**
 * The local deadline of a lease: counted from when the call that won it was sent (the server
 * started it no earlier), minus the safety margin for clock drift between here and the server.
 */
export function leaseDeadline(sentAtMs: number, usableMs: number, safetyMarginMs: number): number {
  return sentAtMs + usableMs - safetyMarginMs;
}

/** How long to wait for a campaign: a lease won later than this would be too short to use. */
export function campaignTimeoutMs(o: Pick<PacingOptions, 'leaseMs' | 'safetyMarginMs'>): number {
  return o.leaseMs - o.safetyMarginMs;
}

/** How long to wait for a renewal: an answer after the deadline cannot save the term. */
export function renewTimeoutMs(sentAtMs: number, deadlineMs: number): number {
  return Math.max(1, deadlineMs - sentAtMs);
}

/**
 * How often to renew a lease of `usableMs`: renewMs, or half of what the lease leaves usable when
 * the backend grants less than asked (a short ZooKeeper session), rounded down to 10 ms so that
 * Electors with the same grant share a grid.
 */
export function renewInterval(usableMs: number, o: Pick<PacingOptions, 'renewMs' | 'safetyMarginMs'>): number {
  const half = Math.floor((usableMs - o.safetyMarginMs) / 2 / 10) * 10;
  return Math.max(MIN_RETRY_MS, Math.min(o.renewMs, half));
}

/**
 * When a leader renews next. Renewals fall on a grid of the term's renew interval, shared by every
 * Elector with that interval, so a backend can renew all the leases of a process in one batch. Off
 * the grid, halfway to the deadline, when the next slot is further than that (after failed
 * renewals), so a second try still fits before the deadline.
 *
 * A wake-up is never sooner than MIN_RETRY_MS, so with less than twice that left it can fall at or
 * past the deadline. That is safe: the deadline timer ends the term first, and a step that still
 * finds the term (a stalled loop) checks `mustStepDown` before it sends a renewal.
 */
export function nextRenewal(s: { nowMs: number; deadlineMs: number; renewEveryMs: number }): PacingDecision {
  const slotMs = nextSlot(s.nowMs, 1, s.renewEveryMs);
  const leftMs = s.deadlineMs - s.nowMs;
  if (slotMs - s.nowMs <= leftMs / 2) return { action: 'renew', slotMs };
  return { action: 'renew', delayMs: Math.max(MIN_RETRY_MS, leftMs / 2) };
}

/** After a renewal was confirmed: the term's new deadline (it never moves back) and renew interval. */
export function afterRenewed(
  s: { sentAtMs: number; grantedMs: number; deadlineMs: number },
  o: PacingOptions,
): { deadlineMs: number; extended: boolean; renewEveryMs: number } {
  const usable = usableLeaseMs(s.grantedMs, o.leaseMs);
  const deadline = leaseDeadline(s.sentAtMs, usable, o.safetyMarginMs);
  const extended = deadline > s.deadlineMs;
  return { deadlineMs: extended ? deadline : s.deadlineMs, extended, renewEveryMs: renewInterval(usable, o) };
}

/**
 * After a renewal failed (refused, errored or timed out): try again while the lease lasts, at
 * retryMs or a third of what is left, whichever is sooner, so that several tries fit.
 */
export function afterRenewFailed(s: { nowMs: number; deadlineMs: number }, o: Pick<PacingOptions, 'retryMs'>): PacingDecision {
  if (mustStepDown(s.nowMs, s.deadlineMs)) return { action: 'step-down' };
  const leftMs = s.deadlineMs - s.nowMs;
  return { action: 'renew', delayMs: Math.max(MIN_RETRY_MS, Math.min(o.retryMs, leftMs / 3)) };
}

/**
 * After a campaign failed, or won a lease too late to use: exponential backoff from retryMs up to
 * leaseMs, with jitter (`jitter` in [0, 1), the caller's random draw) so candidates spread out.
 * `failures` counts the calls that failed in a row; 0 (a late grant after an answered call) backs
 * off half a retryMs.
 */
export function campaignBackoff(
  s: { failures: number; jitter: number },
  o: Pick<PacingOptions, 'retryMs' | 'leaseMs'>,
): PacingDecision {
  const base = Math.min(o.retryMs * 2 ** Math.min(s.failures - 1, 10), Math.max(o.retryMs, o.leaseMs));
  return { action: 'campaign', delayMs: Math.max(MIN_RETRY_MS, Math.round(base * (0.5 + s.jitter * 0.5))) };
}

/**
 * After the server handed back a term we had already given up (its token is not above the last
 * one we led with): campaign again soon once the backend's token counter was lifted past ours,
 * else at retryMs while it catches up.
 */
export function afterStaleTerm(s: { canRaiseTokenFloor: boolean }, o: Pick<PacingOptions, 'retryMs'>): PacingDecision {
  return { action: 'campaign', delayMs: s.canRaiseTokenFloor ? MIN_RETRY_MS : o.retryMs };
}

/** What a won campaign allows: lead, or release the grant (a repeated token, or no time left). */
export function judgeGrant(s: {
  nowMs: number;
  token: number;
  lastToken: number | null;
  deadlineMs: number;
}): 'lead' | 'stale-term' | 'too-late' {
  if (s.lastToken !== null && s.token <= s.lastToken) return 'stale-term';
  if (mustStepDown(s.nowMs, s.deadlineMs)) return 'too-late';
  return 'lead';
}

/** A follower's view when it decides its next campaign. */
export interface FollowerSnapshot {
  nowMs: number;
  /** How long the current leader's lease can still run, as the server said; undefined if it did not. */
  leaseRemainingMs?: number;
  /** How the backend pushes changes to candidates (`changes.delivery`), `'none'` without `changes`. */
  push: 'none' | Delivery;
  /** Whether changes reach us by push right now (a watch is open and the backend says it is live). */
  watching: boolean;
  /** The backend named this very instance leader without granting it the lease (a stale record). */
  namedSelf: boolean;
  /** No campaign before this instant (after stepping down); 0 for none. */
  holdOffUntilMs: number;
}

/**
 * When a follower campaigns next. It tries again when the current lease can end (the server said
 * when), and no later than retryMs unless a push it can count on will wake it sooner.
 */
export function nextCampaign(s: FollowerSnapshot, o: Pick<PacingOptions, 'retryMs'>): PacingDecision {
  // A record naming us without a lease will not be pushed away: look again at retryMs.
  if (s.namedSelf) return { action: 'campaign', delayMs: o.retryMs };
  // One ms past the end, so that the lease has surely ended when we look.
  const hint = s.leaseRemainingMs === undefined ? undefined : Math.max(0, s.leaseRemainingMs) + 1;
  let delay: number | undefined;
  if (s.watching) {
    // A change is pushed to us, so only the end of the current lease (a crash) needs a look;
    // with best-effort push and no hint, poll at retryMs as a fallback.
    delay = hint ?? (s.push === 'reliable' ? undefined : o.retryMs);
  } else {
    delay = Math.min(hint ?? Infinity, o.retryMs);
  }
  const holdOff = s.holdOffUntilMs - s.nowMs;
  if (holdOff > 0) delay = Math.max(delay ?? holdOff, holdOff);
  if (delay === undefined) return { action: 'wait-for-push' };
  // Round up to a shared grid so that many Electors on one backend poll in the same turn and
  // their calls can be batched.
  return { action: 'campaign', slotMs: nextSlot(s.nowMs, delay, POLL_GRID_MS) };
}

/**
 * The backend pushed the current lease's new end (a `LeaseEndHint`: a renewal, or 0 for an
 * expiry). A follower whose next campaign is its look at the lease's end (`leaseEndLook`) moves
 * that look to the end pushed, by the rule of `nextCampaign`; a renewal pushed every renew interval
 * then keeps it from sending anything. Everyone else keeps the timer armed (null): a leader (its
 * own lease is its own business), and a follower whose next campaign has another reason (a
 * backoff after a failure, a record naming itself). A lost hint leaves the look where it was, at
 * most one lease away.
 */
export function onLeaseEndPushed(
  s: Omit<FollowerSnapshot, 'namedSelf' | 'leaseRemainingMs'> & {
    role: 'follower' | 'leader';
    leaseRemainingMs: number;
    /** The follower's next campaign is its look at the end of the lease its last answer named. */
    leaseEndLook: boolean;
  },
  o: Pick<PacingOptions, 'retryMs'>,
): PacingDecision | null {
  if (s.role !== 'follower' || !s.leaseEndLook) return null;
  const { nowMs, leaseRemainingMs, push, watching, holdOffUntilMs } = s;
  return nextCampaign({ nowMs, leaseRemainingMs, push, watching, namedSelf: false, holdOffUntilMs }, o);
}

/**
 * Whether a pushed lease end can wait for the follower's look armed at `lookAtMs`: it ends no
 * sooner than the look, so the look moving there can be done when it fires (`onLeaseEndLookDue`)
 * rather than now. A follower of thousands of elections is told of thousands of renewals a
 * second: each then costs a store, not a re-armed timer. An end sooner than the look cannot wait.
 */
export function leaseEndWaitsForLook(s: { nowMs: number; leaseRemainingMs: number; lookAtMs: number }): boolean {
  return nextSlot(s.nowMs, Math.max(0, s.leaseRemainingMs) + 1, POLL_GRID_MS) >= s.lookAtMs;
}

/**
 * A follower's look at the end of the lease is due, and a lease end was pushed since it was armed
 * (`pushedEndMs`, the newest, kept because it could wait: `leaseEndWaitsForLook`). Look now (null)
 * when the look at that end would be due too; else move the look there, by the rule of
 * `nextCampaign`, as `onLeaseEndPushed` would have done when it was pushed.
 */
export function onLeaseEndLookDue(
  s: Omit<FollowerSnapshot, 'namedSelf' | 'leaseRemainingMs'> & { pushedEndMs: number },
  o: Pick<PacingOptions, 'retryMs'>,
): PacingDecision | null {
  const { nowMs, pushedEndMs, push, watching, holdOffUntilMs } = s;
  if (nextSlot(pushedEndMs, 1, POLL_GRID_MS) <= nowMs) return null;
  return nextCampaign({ nowMs, leaseRemainingMs: pushedEndMs - nowMs, push, watching, namedSelf: false, holdOffUntilMs }, o);
}

/**
 * A change of the election was pushed to us: act at once, except that a follower still holding
 * off after stepping down waits for the hold-off to pass.
 */
export function onChangePushed(s: { role: 'follower' | 'leader'; nowMs: number; holdOffUntilMs: number }): PacingDecision {
  const wait = s.holdOffUntilMs - s.nowMs;
  if (s.role === 'leader') return { action: 'renew', delayMs: 0 };
  return { action: 'campaign', delayMs: wait > 0 ? wait : 0 };
}

/**
 * How long a leader that steps down stays out of the race: long enough for a follower that missed
 * the wake-up to poll (every retryMs) first.
 */
export function stepDownHoldOffUntil(nowMs: number, o: Pick<PacingOptions, 'retryMs'>): number {
  return nowMs + 2 * o.retryMs;
}

/** After stepping down and releasing: campaign again once the hold-off has passed. */
export function afterStepDown(s: { nowMs: number; holdOffUntilMs: number }): PacingDecision {
  return { action: 'campaign', delayMs: Math.max(0, s.holdOffUntilMs - s.nowMs) };
}
