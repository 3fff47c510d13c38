import type { CampaignResult, Delivery, LeaseEndHint, RenewResult } from './backend';
import {
  afterRenewFailed,
  afterRenewed,
  afterStaleTerm,
  afterStepDown,
  campaignBackoff,
  campaignTimeoutMs,
  judgeGrant,
  leaseDeadline,
  mustStepDown,
  nextCampaign,
  leaseEndWaitsForLook,
  nextRenewal,
  onChangePushed,
  onLeaseEndLookDue,
  onLeaseEndPushed,
  renewInterval,
  renewTimeoutMs,
  stepDownHoldOffUntil,
  usableLeaseMs,
  type PacingDecision,
  type PacingOptions,
} from './elector-pacing';
import type { LeadershipState, RevokeReason, Role } from './elector-types';
import { candidateOf, candidateOfNullable } from './instance-id';

/**
 * The Elector as one state machine: `transition(state, event, config)` returns the next state and
 * the effects that follow, and does nothing else. It reads no clock (an event that needs the time
 * carries `now`, on performance.now()), arms no timer and calls no backend: elector-driver.ts does
 * that, and feeds what comes back in as the next event. When each call comes is decided in
 * elector-pacing.ts.
 *
 * A campaign's life, in events: `start` arms a step; `timer-fired` sends a `campaign`; its
 * `campaign-answered` either begins a term (`elected`, the deadline armed, the first renewal
 * after `term-announced`) or arms the next campaign; as leader, `timer-fired` sends a `renew`,
 * `renewal-answered` moves the deadline and arms the next one; the term ends (`revoked`) on
 * `deadline-reached`, on a renewal refused (`lease-lost`), or on `stop`/`pause`/`step-down`,
 * which hand the term over: its work is awaited, then the lease released (`handover-done`).
 */

/** What the machine knows of the backend and the options; settled when the Elector is built. */
export interface MachineConfig extends PacingOptions {
  readonly candidateId: string;
  /** What leases are held under (see instance-id.ts). */
  readonly instanceId: string;
  /** How the backend pushes changes to candidates (`changes.delivery`), or `'none'` without `changes`. */
  readonly push: 'none' | Delivery;
  readonly leaseEndPush: boolean;
  readonly tokenFloor: boolean;
}

/** One term as its leader keeps it. */
export interface TermState {
  readonly token: number;
  /** performance.now() after which this candidate must not act as leader. */
  readonly deadline: number;
  /** Renewal interval: renewMs, or less when the backend grants a shorter lease. */
  readonly renewEveryMs: number;
  /** The lease this term runs on: leaseMs, or what the backend granted when that is shorter. */
  readonly leaseMs: number;
}

/** Where the Elector stands. The machine is its only writer. */
export interface ElectorState {
  readonly role: Role;
  /** Bumped whenever the role changes, so that answers to calls sent before are ignored. */
  readonly epoch: number;
  /** The term led, while `role` is `leader`. */
  readonly term: TermState | null;
  /** Highest token this Elector has led with; a later term must have a greater one. */
  readonly lastToken: number | null;
  /** performance.now() before which a step-down keeps this Elector from campaigning again. */
  readonly holdOffUntil: number;
  /**
   * The latest hand-over of a term given up on purpose (its work awaited, then its lease
   * released), while it runs: no campaign meanwhile (it would find the lease still ours).
   */
  readonly handover: number | null;
  /** Hand-overs begun so far: the next one's id. */
  readonly handovers: number;
  /** The deadline the deadline timer is armed for, or null. */
  readonly deadlineArmedAt: number | null;
  /** The armed step is a follower's look at the end of the lease its last answer named. */
  readonly leaseEndLook: boolean;
  /** The grid slot that look is armed for; null while it waits for a push (nothing armed). */
  readonly leaseEndLookAt: number | null;
  /** `start()` waits for the first outcome of its campaigns. */
  readonly awaitingFirst: boolean;
  /** The state published to subscribers. */
  readonly view: LeadershipState;
  /**
   * The instance id of another Elector with our candidate id that leads, while the backend names
   * one: it cannot share our term, but it is a deployment mistake (a `health()` problem).
   */
  readonly duplicate: string | null;
}

export const initialState: ElectorState = Object.freeze({
  role: 'stopped',
  epoch: 0,
  term: null,
  lastToken: null,
  holdOffUntil: 0,
  handover: null,
  handovers: 0,
  deadlineArmedAt: null,
  leaseEndLook: false,
  leaseEndLookAt: null,
  awaitingFirst: false,
  view: Object.freeze({ role: 'stopped', leaderId: null, token: null }),
  duplicate: null,
});

export type ElectorEvent =
  | { type: 'start' }
  /** `release`: hand the term (or the candidacy) over; false when start() was refused. */
  | { type: 'stop'; release: boolean }
  /** The release of a stop returned. */
  | { type: 'stop-finished' }
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'step-down' }
  /**
   * The step timer fired; `busy`: a call is in flight. `pushedEnd`: the newest lease end pushed
   * since the step was armed, kept by the driver for it (see `routeLeaseEndHint`), with
   * `watching` as for `pushed`.
   */
  | { type: 'timer-fired'; now: number; busy: boolean; pushedEnd?: number; watching?: boolean }
  /** `jitter` in [0, 1): the driver's random draw for a backoff. */
  | { type: 'campaign-answered'; epoch: number; sentAt: number; now: number; result: CampaignResult; watching: boolean; jitter: number }
  /** `failures`: failed calls in a row before this one; `answered`: a call succeeded since start. */
  | { type: 'campaign-failed'; epoch: number; error: unknown; permanent: boolean; answered: boolean; failures: number; jitter: number }
  | { type: 'renewal-answered'; epoch: number; sentAt: number; now: number; result: RenewResult }
  | { type: 'renewal-failed'; epoch: number; now: number; error: unknown }
  | { type: 'deadline-reached'; now: number }
  /** The term's election was announced to subscribers (who may take a while): pace its renewals. */
  | { type: 'term-announced'; token: number; now: number }
  /** The backend pushed a change (with `hint`: only the current lease's new end), or a deferred step woke. */
  | { type: 'pushed'; now: number; hint?: LeaseEndHint | undefined; busy: boolean; watching: boolean }
  /** The work of a term stepped down from has ended: the hold-off counts from now. */
  | { type: 'term-work-settled'; now: number }
  | { type: 'handover-done'; id: number; now: number }
  /** A term that expired has been released. */
  | { type: 'expired-term-released' };

export type ElectorEffect =
  | { type: 'publish'; state: LeadershipState }
  | { type: 'elected'; token: number }
  | { type: 'revoked'; token: number; reason: RevokeReason }
  /** A new term: a fresh signal for its work. */
  | { type: 'begin-term'; token: number }
  /** Abort the term's signal. */
  | { type: 'end-term'; token: number; reason: RevokeReason }
  /** Dispatch `term-announced` with the clock read again. */
  | { type: 'announce'; token: number }
  | { type: 'run-tasks'; token: number }
  | { type: 'log'; level: 'debug' | 'info' | 'warn'; message: string; fields?: Record<string, unknown> }
  | { type: 'arm-step'; at: { delayMs: number } | { slotMs: number } }
  | { type: 'cancel-step' }
  | { type: 'arm-deadline'; at: number }
  | { type: 'cancel-deadline' }
  /** Step again once the call in flight has returned. */
  | { type: 'defer' }
  /** Send a campaign (a renewal), given up on after `timeoutMs`; its answer carries `epoch` back. */
  | { type: 'campaign'; epoch: number; sentAt: number; timeoutMs: number }
  | { type: 'renew'; epoch: number; token: number; sentAt: number; timeoutMs: number }
  /** Within the current call, awaited: give back a grant not led on. */
  | { type: 'release-grant'; token: number }
  /** Within the current call, awaited: lift the backend's token counter past `floor`. */
  | { type: 'raise-token-floor'; floor: number }
  /** After the call in flight: release a term that expired, then `expired-term-released`. */
  | { type: 'release-expired'; token: number }
  /**
   * After the hand-overs before it: await the term's work (up to `deadline`; with `holdOff`, then
   * `term-work-settled`), release the term (with no token, the candidacy), then `handover-done`.
   */
  | { type: 'hand-over'; id: number; token: number | null; deadline: number | null; holdOff: boolean }
  | { type: 'call-succeeded' }
  | { type: 'call-failed'; what: 'campaign' | 'renew'; error: unknown }
  | { type: 'lease-given-up' }
  /** start() resolves. */
  | { type: 'first-outcome' }
  /** start() rejects with `error` (and stops). */
  | { type: 'refuse-start'; error: unknown }
  /** Calls counted afresh, the lease gauge on. */
  | { type: 'open' }
  /** The lease gauge off, the backend state forgotten: a stopped Elector is no outage. */
  | { type: 'close' }
  | { type: 'watch' }
  | { type: 'unwatch' };

export interface Transition {
  state: ElectorState;
  effects: ElectorEffect[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The state being built and the effects so far, for one event. */
interface Draft {
  s: Mutable<ElectorState>;
  fx: ElectorEffect[];
  c: MachineConfig;
}

/** The one transition function: pure, `state` is not changed. */
export function transition(state: ElectorState, event: ElectorEvent, config: MachineConfig): Transition {
  const d: Draft = { s: { ...state }, fx: [], c: config };
  on(d, event);
  return { state: d.s, effects: d.fx };
}

function on(d: Draft, e: ElectorEvent): void {
  const { s, fx, c } = d;
  switch (e.type) {
    case 'start':
      if (s.role !== 'stopped') return;
      s.role = 'follower';
      s.epoch++;
      fx.push({ type: 'open' });
      publish(d, { role: 'follower', leaderId: null, token: null });
      log(d, 'info', 'campaign started');
      fx.push({ type: 'watch' });
      s.awaitingFirst = true;
      arm(d, { delayMs: 0 });
      return;
    case 'stop': {
      if (s.role === 'stopped') return;
      const current = s.role === 'leader' ? s.term : null;
      if (current) revoke(d, 'stopped', null, 'stopped');
      s.role = 'stopped';
      s.epoch++;
      cancelStep(d);
      fx.push({ type: 'close' });
      settleFirst(d);
      // The role changes when stop() is called, not when the release returns.
      publish(d, { role: 'stopped', leaderId: null, token: null });
      if (e.release) handOver(d, current, false);
      return;
    }
    case 'stop-finished':
      // Unwatched after the release: a backend may tie its wake-up channel to the subscription,
      // and followers should be woken by the release itself.
      fx.push({ type: 'unwatch' });
      s.holdOffUntil = 0;
      s.duplicate = null;
      log(d, 'info', 'campaign stopped');
      return;
    case 'pause': {
      if (s.role === 'stopped' || s.role === 'paused') return;
      const current = s.role === 'leader' ? s.term : null;
      if (current) revoke(d, 'paused');
      s.role = 'paused';
      s.epoch++;
      cancelStep(d);
      publish(d, { ...s.view, role: 'paused' });
      log(d, 'info', 'campaign paused');
      handOver(d, current, false);
      return;
    }
    case 'resume':
      if (s.role !== 'paused') return;
      s.role = 'follower';
      s.epoch++;
      publish(d, { role: 'follower', leaderId: s.view.leaderId, token: s.view.token });
      log(d, 'info', 'campaign resumed');
      arm(d, { delayMs: 0 });
      return;
    case 'step-down': {
      const current = s.term;
      if (s.role !== 'leader' || !current) return;
      revoke(d, 'stepped-down');
      handOver(d, current, true);
      return;
    }
    case 'timer-fired':
      if (lookMovedOn(d, e)) return;
      s.leaseEndLook = false;
      s.leaseEndLookAt = null;
      if (e.busy) fx.push({ type: 'defer' });
      // A follower handing a term over campaigns once that is done (the hand-over arms it).
      else if (s.role === 'follower' && s.handover === null) {
        fx.push({ type: 'campaign', epoch: s.epoch, sentAt: e.now, timeoutMs: campaignTimeoutMs(c) });
      } else if (s.role === 'leader' && s.term) {
        if (mustStepDown(e.now, s.term.deadline)) revoke(d, 'lease-expired');
        else fx.push({ type: 'renew', epoch: s.epoch, token: s.term.token, sentAt: e.now, timeoutMs: renewTimeoutMs(e.now, s.term.deadline) });
      }
      return;
    case 'campaign-failed':
      if (e.epoch !== s.epoch) return;
      if (s.awaitingFirst && !e.answered && e.permanent) {
        // Never answered otherwise since start(): a configuration that cannot work, which
        // retrying would only hide. start() rejects with it (and stops) rather than retry.
        s.awaitingFirst = false;
        fx.push({ type: 'refuse-start', error: e.error });
        return;
      }
      fx.push({ type: 'call-failed', what: 'campaign', error: e.error });
      settleFirst(d);
      follow(d, campaignBackoff({ failures: e.failures + 1, jitter: e.jitter }, c));
      return;
    case 'campaign-answered':
      // An answer from before a pause or stop: their release covers a lease it granted.
      if (e.epoch !== s.epoch) return;
      fx.push({ type: 'call-succeeded' });
      if (e.result.role === 'leader') campaignWon(d, e, e.result);
      else campaignLost(d, e, e.result);
      settleFirst(d);
      return;
    case 'term-announced':
      if (s.role !== 'leader' || s.term?.token !== e.token) return;
      follow(d, nextRenewal({ nowMs: e.now, deadlineMs: s.term.deadline, renewEveryMs: s.term.renewEveryMs }));
      fx.push({ type: 'run-tasks', token: e.token });
      return;
    case 'renewal-answered': {
      const term = s.term;
      if (e.epoch !== s.epoch || !term) return;
      fx.push({ type: 'call-succeeded' });
      if (mustStepDown(e.now, term.deadline)) {
        // The answer came after the deadline, before the deadline timer ran (a stalled loop):
        // isLeader() has already said false, and a term that ended does not come back.
        revoke(d, 'lease-expired');
      } else if (e.result.held) {
        const renewed = afterRenewed({ sentAtMs: e.sentAt, grantedMs: e.result.leaseMs, deadlineMs: term.deadline }, c);
        if (renewed.extended) setDeadline(d, renewed.deadlineMs);
        const next = (s.term = { ...s.term!, renewEveryMs: renewed.renewEveryMs, leaseMs: usableLeaseMs(e.result.leaseMs, c.leaseMs) });
        follow(d, nextRenewal({ nowMs: e.now, deadlineMs: next.deadline, renewEveryMs: next.renewEveryMs }));
      } else {
        revoke(d, 'lease-lost', candidateOfNullable(e.result.leaderId));
      }
      return;
    }
    case 'renewal-failed':
      if (e.epoch !== s.epoch || !s.term) return;
      fx.push({ type: 'call-failed', what: 'renew', error: e.error });
      follow(d, afterRenewFailed({ nowMs: e.now, deadlineMs: s.term.deadline }, c));
      return;
    case 'deadline-reached':
      s.deadlineArmedAt = null;
      if (s.role !== 'leader' || !s.term) return;
      if (mustStepDown(e.now, s.term.deadline)) revoke(d, 'lease-expired');
      else setDeadline(d, s.term.deadline);
      return;
    case 'pushed':
      if (s.role !== 'follower' && s.role !== 'leader') return;
      if (e.hint !== undefined && c.leaseEndPush) {
        // Pacing only: a call in flight will arm the next step from its own answer.
        const left = e.hint.leaseRemainingMs;
        if (e.busy || !(left >= 0 && Number.isFinite(left))) return;
        const next = onLeaseEndPushed(
          { role: s.role, nowMs: e.now, leaseRemainingMs: left, push: c.push, watching: e.watching, leaseEndLook: s.leaseEndLook, holdOffUntilMs: s.holdOffUntil },
          c,
        );
        // Still the look at the lease's end, only moved: the next push may move it again.
        if (next) lookAtLeaseEnd(d, next);
        return;
      }
      if (e.busy) fx.push({ type: 'defer' });
      else follow(d, onChangePushed({ role: s.role, nowMs: e.now, holdOffUntilMs: s.holdOffUntil }));
      return;
    case 'term-work-settled':
      s.holdOffUntil = stepDownHoldOffUntil(e.now, c);
      return;
    case 'handover-done':
      if (s.handover !== e.id) return;
      s.handover = null;
      if (s.role === 'follower') follow(d, afterStepDown({ nowMs: e.now, holdOffUntilMs: s.holdOffUntil }));
      return;
    case 'expired-term-released':
      if (s.role === 'follower') arm(d, { delayMs: 0 });
      return;
  }
}

/** A campaign answered with a lease: lead, unless the grant repeats a token or came too late. */
function campaignWon(
  d: Draft,
  e: { sentAt: number; now: number; jitter: number },
  result: Extract<CampaignResult, { role: 'leader' }>,
): void {
  const { s, fx, c } = d;
  const usable = usableLeaseMs(result.leaseMs, c.leaseMs);
  const deadline = leaseDeadline(e.sentAt, usable, c.safetyMarginMs);
  const grant = judgeGrant({ nowMs: e.now, token: result.token, lastToken: s.lastToken, deadlineMs: deadline });
  if (grant === 'stale-term') {
    // The server still holds our previous term, which we already gave up locally. Leading it
    // again would repeat a token; release it and take a fresh term instead.
    log(d, 'debug', 'releasing a term already given up', { token: result.token });
    fx.push({ type: 'release-grant', token: result.token });
    // A server that lost its counter (a restart without persistence) would hand out old tokens
    // for a while: lift it past ours instead of looping until it gets there.
    if (c.tokenFloor) fx.push({ type: 'raise-token-floor', floor: s.lastToken! });
    follow(d, afterStaleTerm({ canRaiseTokenFloor: c.tokenFloor }, c));
  } else if (grant === 'too-late') {
    log(d, 'warn', 'lease granted too late to use; releasing it', { token: result.token });
    fx.push({ type: 'release-grant', token: result.token });
    // The call succeeded: no failures in a row.
    follow(d, campaignBackoff({ failures: 0, jitter: e.jitter }, c));
  } else {
    // We lead now: no duplicate of ours does.
    s.duplicate = null;
    s.epoch++;
    s.role = 'leader';
    s.lastToken = result.token;
    s.term = { token: result.token, deadline, renewEveryMs: renewInterval(usable, c), leaseMs: usable };
    fx.push({ type: 'begin-term', token: result.token });
    setDeadline(d, deadline);
    publish(d, { role: 'leader', leaderId: c.candidateId, token: result.token });
    log(d, 'info', 'elected', { token: result.token });
    fx.push({ type: 'elected', token: result.token });
    fx.push({ type: 'announce', token: result.token });
  }
}

/** A campaign answered that another leads (or nobody): follow, and look again when pacing says. */
function campaignLost(
  d: Draft,
  e: { now: number; watching: boolean },
  result: Extract<CampaignResult, { role: 'follower' }>,
): void {
  const { s, c } = d;
  const leaderId = candidateOfNullable(result.leaderId);
  if (leaderId !== s.view.leaderId || result.token !== s.view.token) {
    publish(d, { role: 'follower', leaderId, token: result.token, reason: s.view.reason });
  }
  noticeDuplicate(d, result.leaderId);
  // A stale node or row of ours; pacing looks again at retryMs, and ignores push then.
  const namedSelf = result.leaderId === c.instanceId;
  if (namedSelf) log(d, 'warn', 'backend reports this candidate as leader without a lease');
  const next = nextCampaign(
    {
      nowMs: e.now,
      leaseRemainingMs: result.leaseRemainingMs,
      push: c.push,
      watching: !namedSelf && e.watching,
      namedSelf,
      holdOffUntilMs: s.holdOffUntil,
    },
    c,
  );
  // A pushed lease end may move this look (not the retryMs look at a record naming us).
  if (namedSelf) follow(d, next);
  else lookAtLeaseEnd(d, next);
}

/**
 * How the driver takes a pushed lease end (`LeaseEndHint`) at `now`, before any transition: a
 * follower of thousands of elections is told of thousands of renewals a second. `'drop'`: the
 * `pushed` event would change nothing (a leader's own lease, a follower whose next step has
 * another reason, a call in flight). `'keep'`: the end can wait for the armed look
 * (`leaseEndWaitsForLook`); the driver keeps the newest such end and passes it with the look's
 * `timer-fired`, which moves the look then: one re-arm per look, not one per renewal.
 * `'dispatch'`: feed it as a `pushed` event now (it brings the look forward, nothing is armed to
 * wait for, or the backend does not push lease ends and it is a plain change). Pure.
 */
export function routeLeaseEndHint(
  state: ElectorState,
  e: { now: number; hint: LeaseEndHint; busy: boolean },
  config: MachineConfig,
): 'drop' | 'keep' | 'dispatch' {
  if (!config.leaseEndPush) return 'dispatch';
  const left = e.hint.leaseRemainingMs;
  if (e.busy || state.role !== 'follower' || !state.leaseEndLook || !(left >= 0 && Number.isFinite(left))) return 'drop';
  const lookAtMs = state.leaseEndLookAt;
  return lookAtMs !== null && leaseEndWaitsForLook({ nowMs: e.now, leaseRemainingMs: left, lookAtMs }) ? 'keep' : 'dispatch';
}

/**
 * The look at the lease's end fired with a later end kept for it (`routeLeaseEndHint`): move the
 * look there instead of campaigning, unless that end is due too. Returns whether it moved.
 */
function lookMovedOn(d: Draft, e: Extract<ElectorEvent, { type: 'timer-fired' }>): boolean {
  const { s, c } = d;
  if (e.pushedEnd === undefined || e.busy || !s.leaseEndLook || s.role !== 'follower' || s.handover !== null) return false;
  const next = onLeaseEndLookDue(
    { nowMs: e.now, pushedEndMs: e.pushedEnd, push: c.push, watching: e.watching === true, holdOffUntilMs: s.holdOffUntil },
    c,
  );
  if (!next) return false;
  lookAtLeaseEnd(d, next);
  return true;
}

/** Arms what `next` names as the follower's look at the lease's end, which a pushed end may move. */
function lookAtLeaseEnd(d: Draft, next: PacingDecision): void {
  follow(d, next);
  d.s.leaseEndLook = true;
  d.s.leaseEndLookAt = next.action === 'campaign' && 'slotMs' in next ? next.slotMs : null;
}

/** The backend named `leader` (an instance id): is it another instance with our candidate id? */
function noticeDuplicate(d: Draft, leader: string | null): void {
  const { s, c } = d;
  const duplicate = leader !== null && leader !== c.instanceId && candidateOf(leader) === c.candidateId ? leader : null;
  if (duplicate !== null && s.duplicate === null) {
    log(d, 'warn', 'another Elector with this candidate id leads this election; candidate ids should be unique', {
      instance: c.instanceId,
      leaderInstance: duplicate,
    });
  }
  s.duplicate = duplicate;
}

/**
 * Ends the current term locally, at once: isLeader() is false from here. `next` is the role that
 * follows: `stopped` for stop(), so that state$ goes from leader straight to stopped.
 */
function revoke(d: Draft, reason: RevokeReason, leaderId: string | null = null, next: 'follower' | 'stopped' = 'follower'): void {
  const { s, fx } = d;
  const term = s.term;
  if (s.role !== 'leader' || !term) return;
  s.epoch++;
  s.role = next;
  s.term = null;
  s.deadlineArmedAt = null;
  fx.push({ type: 'cancel-deadline' });
  publish(d, { role: next, leaderId, token: null, reason });
  // A renewal that could not be confirmed in time: the backend is out of reach for our purpose.
  if (reason === 'lease-expired') fx.push({ type: 'lease-given-up' });
  log(d, reason === 'lease-expired' ? 'warn' : 'info', 'leadership revoked', { token: term.token, reason });
  fx.push({ type: 'end-term', token: term.token, reason });
  fx.push({ type: 'revoked', token: term.token, reason });
  // Let an expired lease go on the server if we still can, so the next leader need not wait for
  // it, then campaign again; a lost one is someone else's: campaign at once.
  if (reason === 'lease-expired') fx.push({ type: 'release-expired', token: term.token });
  else if (reason === 'lease-lost') arm(d, { delayMs: 0 });
}

/**
 * A term given up on purpose ends in this order: its signal has aborted (revoke), its work is
 * awaited up to its deadline, then the lease is released; with no term, the candidacy is. Until
 * the latest hand-over is done nothing campaigns; then a follower campaigns again (after the
 * hold-off of a step-down, counted from when the work ended).
 */
function handOver(d: Draft, term: TermState | null, holdOff: boolean): void {
  const id = ++d.s.handovers;
  d.s.handover = id;
  d.fx.push({ type: 'hand-over', id, token: term?.token ?? null, deadline: term?.deadline ?? null, holdOff });
}

/**
 * Moves the term's deadline. A deadline timer armed already for no later than that stays: when
 * it fires it is armed again for the deadline as it is then (a timer per renewal is a large part
 * of a leader of thousands' work).
 */
function setDeadline(d: Draft, deadline: number): void {
  const { s } = d;
  s.term = { ...s.term!, deadline };
  if (s.deadlineArmedAt !== null && s.deadlineArmedAt <= deadline) return;
  s.deadlineArmedAt = deadline;
  d.fx.push({ type: 'arm-deadline', at: deadline });
}

/** Arms what a pacing decision names. */
function follow(d: Draft, next: PacingDecision): void {
  if (next.action === 'step-down') revoke(d, 'lease-expired');
  else if (next.action === 'wait-for-push') {
    d.s.leaseEndLook = false;
    d.s.leaseEndLookAt = null;
  }
  else arm(d, 'slotMs' in next ? { slotMs: next.slotMs } : { delayMs: next.delayMs });
}

function arm(d: Draft, at: { delayMs: number } | { slotMs: number }): void {
  d.s.leaseEndLook = false;
  d.s.leaseEndLookAt = null;
  d.fx.push({ type: 'arm-step', at });
}

function cancelStep(d: Draft): void {
  d.s.leaseEndLook = false;
  d.s.leaseEndLookAt = null;
  d.fx.push({ type: 'cancel-step' });
}

function settleFirst(d: Draft): void {
  if (!d.s.awaitingFirst) return;
  d.s.awaitingFirst = false;
  d.fx.push({ type: 'first-outcome' });
}

/**
 * Publishes `next` unless it is what subscribers see already. `reason` is kept only for
 * `follower` and `paused`: a leader has lost nothing, and a stopped Elector starts afresh.
 */
function publish(d: Draft, next: LeadershipState): void {
  const clean: LeadershipState = { role: next.role, leaderId: next.leaderId, token: next.token };
  if (next.reason !== undefined && next.role !== 'leader' && next.role !== 'stopped') clean.reason = next.reason;
  const cur = d.s.view;
  if (cur.role === clean.role && cur.leaderId === clean.leaderId && cur.token === clean.token && cur.reason === clean.reason) return;
  d.s.view = clean;
  d.fx.push({ type: 'publish', state: clean });
}

function log(d: Draft, level: 'debug' | 'info' | 'warn', message: string, fields?: Record<string, unknown>): void {
  d.fx.push(fields ? { type: 'log', level, message, fields } : { type: 'log', level, message });
}
