import { describe, expect, test } from '@jest/globals';
import {
  initialState,
  routeLeaseEndHint,
  transition,
  type ElectorEffect,
  type ElectorEvent,
  type ElectorState,
  type MachineConfig,
} from '../src/elector-machine';

// Every transition of the Elector's state machine, one row each: the state before, the event,
// the state after (what changes) and the effects, in order. Times are on a made-up
// performance.now() timeline; the lease is 1 000 ms, renewMs 300, retryMs 200, margin 50.

const config: MachineConfig = {
  leaseMs: 1000,
  renewMs: 300,
  retryMs: 200,
  safetyMarginMs: 50,
  candidateId: 'a',
  instanceId: 'a n1',
  push: 'none',
  leaseEndPush: false,
  tokenFloor: false,
};
const pushing: MachineConfig = { ...config, push: 'reliable', leaseEndPush: true };
const floorRaising: MachineConfig = { ...config, tokenFloor: true };

const stopped = initialState;
const follower: ElectorState = { ...initialState, role: 'follower', epoch: 1, view: { role: 'follower', leaderId: null, token: null } };
const starting: ElectorState = { ...follower, awaitingFirst: true };
const handingOver: ElectorState = { ...follower, handover: 1, handovers: 1 };
const term = { token: 7, deadline: 1950, renewEveryMs: 300, leaseMs: 1000 };
const leader: ElectorState = {
  ...initialState,
  role: 'leader',
  epoch: 2,
  term,
  lastToken: 7,
  deadlineArmedAt: 1950,
  view: { role: 'leader', leaderId: 'a', token: 7 },
};
const paused: ElectorState = { ...initialState, role: 'paused', epoch: 3, view: { role: 'paused', leaderId: null, token: null } };

/** One effect as a short line, so that a row reads as a table. */
function line(e: ElectorEffect): string {
  switch (e.type) {
    case 'publish':
      return `publish ${e.state.role} ${e.state.leaderId} ${e.state.token}${e.state.reason ? ` ${e.state.reason}` : ''}`;
    case 'log':
      return `log ${e.level} ${e.message}`;
    case 'arm-step':
      return 'slotMs' in e.at ? `arm slot ${e.at.slotMs}` : `arm ${e.at.delayMs}ms`;
    case 'arm-deadline':
      return `deadline ${e.at}`;
    case 'campaign':
      return `campaign epoch ${e.epoch} sent ${e.sentAt} timeout ${e.timeoutMs}`;
    case 'renew':
      return `renew ${e.token} epoch ${e.epoch} sent ${e.sentAt} timeout ${e.timeoutMs}`;
    case 'hand-over':
      return `hand-over #${e.id} ${e.token}${e.holdOff ? ' hold-off' : ''}`;
    case 'call-failed':
      return `call-failed ${e.what}`;
    case 'raise-token-floor':
      return `raise-token-floor ${e.floor}`;
    case 'end-term':
    case 'revoked':
      return `${e.type} ${e.token} ${e.reason}`;
    case 'elected':
    case 'begin-term':
    case 'announce':
    case 'run-tasks':
    case 'release-grant':
    case 'release-expired':
      return `${e.type} ${e.token}`;
    default:
      return e.type;
  }
}

/** The effects of ending term 7 locally. */
function revoked(reason: string, next = 'follower', leaderId: string | null = null): string[] {
  return [
    'cancel-deadline',
    `publish ${next} ${leaderId} null${next === 'follower' ? ` ${reason}` : ''}`,
    ...(reason === 'lease-expired' ? ['lease-given-up'] : []),
    `log ${reason === 'lease-expired' ? 'warn' : 'info'} leadership revoked`,
    `end-term 7 ${reason}`,
    `revoked 7 ${reason}`,
    ...(reason === 'lease-expired' ? ['release-expired 7'] : reason === 'lease-lost' ? ['arm 0ms'] : []),
  ];
}
const afterRevoke = (reason: string): Partial<ElectorState> => ({
  role: 'follower',
  epoch: 3,
  term: null,
  deadlineArmedAt: null,
  view: { role: 'follower', leaderId: null, token: null, reason: reason as never },
});

interface Row {
  name: string;
  state: ElectorState;
  event: ElectorEvent;
  config?: MachineConfig;
  /** The fields that change (the others must not). */
  next: Partial<ElectorState>;
  effects: string[];
}

const wonAt = (sentAt: number, now: number, token = 8): ElectorEvent => ({
  type: 'campaign-answered',
  epoch: 1,
  sentAt,
  now,
  result: { role: 'leader', token, leaseMs: 1000 },
  watching: false,
  jitter: 0,
});
const lostTo = (leaderId: string): ElectorEvent => ({
  type: 'campaign-answered',
  epoch: 1,
  sentAt: 990,
  now: 1000,
  result: { role: 'follower', leaderId, token: 5, leaseRemainingMs: 300 },
  watching: false,
  jitter: 0,
});
const failed = (permanent: boolean, answered = false): ElectorEvent => ({
  type: 'campaign-failed',
  epoch: 1,
  error: new Error('down'),
  permanent,
  answered,
  failures: 0,
  jitter: 0,
});
const renewed = (now: number, held = true): ElectorEvent => ({
  type: 'renewal-answered',
  epoch: 2,
  sentAt: 1500,
  now,
  result: held ? { held: true, leaseMs: 1000 } : { held: false, leaderId: 'b n2' },
});

const rows: Row[] = [
  // start, stop
  {
    name: 'stopped, start: a follower campaigns at once and watches',
    state: stopped,
    event: { type: 'start' },
    next: { role: 'follower', epoch: 1, awaitingFirst: true, view: follower.view },
    effects: ['open', 'publish follower null null', 'log info campaign started', 'watch', 'arm 0ms'],
  },
  { name: 'follower, start: nothing', state: follower, event: { type: 'start' }, next: {}, effects: [] },
  { name: 'stopped, stop: nothing', state: stopped, event: { type: 'stop', release: true }, next: {}, effects: [] },
  {
    name: 'follower, stop: stopped at once, the candidacy released',
    state: follower,
    event: { type: 'stop', release: true },
    next: { role: 'stopped', epoch: 2, handover: 1, handovers: 1, view: stopped.view },
    effects: ['cancel-step', 'close', 'publish stopped null null', 'hand-over #1 null'],
  },
  {
    name: 'starting, stop without release (start refused): start() settles, nothing released',
    state: starting,
    event: { type: 'stop', release: false },
    next: { role: 'stopped', epoch: 2, awaitingFirst: false, view: stopped.view },
    effects: ['cancel-step', 'close', 'first-outcome', 'publish stopped null null'],
  },
  {
    name: 'leader, stop: leader straight to stopped, the term handed over',
    state: leader,
    event: { type: 'stop', release: true },
    next: { role: 'stopped', epoch: 4, term: null, deadlineArmedAt: null, handover: 1, handovers: 1, view: stopped.view },
    effects: [...revoked('stopped', 'stopped'), 'cancel-step', 'close', 'hand-over #1 7'],
  },
  {
    name: 'stopped, stop-finished: unwatched, hold-off and duplicate forgotten',
    state: { ...stopped, holdOffUntil: 1400, duplicate: 'a n9' },
    event: { type: 'stop-finished' },
    next: { holdOffUntil: 0, duplicate: null },
    effects: ['unwatch', 'log info campaign stopped'],
  },
  // pause, resume, step-down
  {
    name: 'follower, pause: paused, the candidacy released',
    state: follower,
    event: { type: 'pause' },
    next: { role: 'paused', epoch: 2, handover: 1, handovers: 1, view: paused.view },
    effects: ['cancel-step', 'publish paused null null', 'log info campaign paused', 'hand-over #1 null'],
  },
  {
    name: 'leader, pause: revoked (paused), then paused, the term handed over',
    state: leader,
    event: { type: 'pause' },
    next: { role: 'paused', epoch: 4, term: null, deadlineArmedAt: null, handover: 1, handovers: 1, view: { ...paused.view, reason: 'paused' } },
    effects: [...revoked('paused'), 'cancel-step', 'publish paused null null paused', 'log info campaign paused', 'hand-over #1 7'],
  },
  { name: 'paused, pause: nothing', state: paused, event: { type: 'pause' }, next: {}, effects: [] },
  { name: 'stopped, pause: nothing', state: stopped, event: { type: 'pause' }, next: {}, effects: [] },
  {
    name: 'paused, resume: a follower campaigns at once',
    state: paused,
    event: { type: 'resume' },
    next: { role: 'follower', epoch: 4, view: follower.view },
    effects: ['publish follower null null', 'log info campaign resumed', 'arm 0ms'],
  },
  { name: 'follower, resume: nothing', state: follower, event: { type: 'resume' }, next: {}, effects: [] },
  {
    name: 'leader, step-down: revoked, the term handed over with a hold-off',
    state: leader,
    event: { type: 'step-down' },
    next: { ...afterRevoke('stepped-down'), handover: 1, handovers: 1 },
    effects: [...revoked('stepped-down'), 'hand-over #1 7 hold-off'],
  },
  { name: 'follower, step-down: nothing', state: follower, event: { type: 'step-down' }, next: {}, effects: [] },
  // the step timer
  {
    name: 'follower, timer-fired: campaign, given up on when a lease won would be too short',
    state: follower,
    event: { type: 'timer-fired', now: 1000, busy: false },
    next: {},
    effects: ['campaign epoch 1 sent 1000 timeout 950'],
  },
  {
    name: 'follower, timer-fired while a call is in flight: deferred until it returns',
    state: follower,
    event: { type: 'timer-fired', now: 1000, busy: true },
    next: {},
    effects: ['defer'],
  },
  {
    name: 'follower handing a term over, timer-fired: nothing (the hand-over arms the campaign)',
    state: handingOver,
    event: { type: 'timer-fired', now: 1000, busy: false },
    next: {},
    effects: [],
  },
  {
    name: 'follower looking at a lease end, timer-fired: the look is over',
    state: { ...follower, leaseEndLook: true },
    event: { type: 'timer-fired', now: 1000, busy: false },
    next: { leaseEndLook: false },
    effects: ['campaign epoch 1 sent 1000 timeout 950'],
  },
  {
    name: 'leader, timer-fired: renew, given up on at the deadline',
    state: leader,
    event: { type: 'timer-fired', now: 1500, busy: false },
    next: {},
    effects: ['renew 7 epoch 2 sent 1500 timeout 450'],
  },
  {
    name: 'leader, timer-fired at the deadline (a stalled loop): revoked, nothing sent',
    state: leader,
    event: { type: 'timer-fired', now: 1950, busy: false },
    next: afterRevoke('lease-expired'),
    effects: revoked('lease-expired'),
  },
  { name: 'stopped, timer-fired: nothing', state: stopped, event: { type: 'timer-fired', now: 1000, busy: false }, next: {}, effects: [] },
  { name: 'paused, timer-fired: nothing', state: paused, event: { type: 'timer-fired', now: 1000, busy: false }, next: {}, effects: [] },
  // campaign answers
  {
    name: 'starting, campaign won: a term until sent + lease − margin; start() settles',
    state: starting,
    event: wonAt(1000, 1010),
    next: {
      role: 'leader',
      epoch: 2,
      term: { token: 8, deadline: 1950, renewEveryMs: 300, leaseMs: 1000 },
      lastToken: 8,
      deadlineArmedAt: 1950,
      awaitingFirst: false,
      view: { role: 'leader', leaderId: 'a', token: 8 },
    },
    effects: [
      'call-succeeded',
      'begin-term 8',
      'deadline 1950',
      'publish leader a 8',
      'log info elected',
      'elected 8',
      'announce 8',
      'first-outcome',
    ],
  },
  {
    name: 'follower seeing a duplicate lead, campaign won with a shorter grant: the term runs on it, renewed at half its usable part; no duplicate leads',
    state: { ...follower, duplicate: 'a n9' },
    event: { ...wonAt(1000, 1010), result: { role: 'leader', token: 8, leaseMs: 450 } } as ElectorEvent,
    next: {
      role: 'leader',
      epoch: 2,
      term: { token: 8, deadline: 1400, renewEveryMs: 200, leaseMs: 450 },
      lastToken: 8,
      deadlineArmedAt: 1400,
      view: { role: 'leader', leaderId: 'a', token: 8 },
      duplicate: null,
    },
    effects: ['call-succeeded', 'begin-term 8', 'deadline 1400', 'publish leader a 8', 'log info elected', 'elected 8', 'announce 8'],
  },
  {
    name: 'follower, campaign answered after a role change (epoch): ignored',
    state: { ...follower, epoch: 5 },
    event: wonAt(1000, 1010),
    next: {},
    effects: [],
  },
  {
    name: 'follower, campaign won with a token already led: released, campaign again at retryMs',
    state: { ...follower, lastToken: 8 },
    event: wonAt(1000, 1010),
    next: {},
    effects: ['call-succeeded', 'log debug releasing a term already given up', 'release-grant 8', 'arm 200ms'],
  },
  {
    name: 'follower, stale grant, a backend that can raise its token floor: raised past ours, campaign soon',
    state: { ...follower, lastToken: 9 },
    event: wonAt(1000, 1010),
    config: floorRaising,
    next: {},
    effects: ['call-succeeded', 'log debug releasing a term already given up', 'release-grant 8', 'raise-token-floor 9', 'arm 10ms'],
  },
  {
    name: 'follower, campaign won after its deadline: released, back off half a retryMs',
    state: follower,
    event: wonAt(0, 950),
    next: {},
    effects: ['call-succeeded', 'log warn lease granted too late to use; releasing it', 'release-grant 8', 'arm 50ms'],
  },
  {
    name: 'starting, campaign lost to b: follow b, look again at retryMs or the lease end (grid)',
    state: starting,
    event: lostTo('b n2'),
    next: { awaitingFirst: false, leaseEndLook: true, leaseEndLookAt: 1200, view: { role: 'follower', leaderId: 'b', token: 5 } },
    effects: ['call-succeeded', 'publish follower b 5', 'arm slot 1200', 'first-outcome'],
  },
  {
    name: 'follower of b, campaign lost to b again: nothing published',
    state: { ...follower, view: { role: 'follower', leaderId: 'b', token: 5 } },
    event: lostTo('b n2'),
    next: { leaseEndLook: true, leaseEndLookAt: 1200 },
    effects: ['call-succeeded', 'arm slot 1200'],
  },
  {
    name: 'follower, the backend names this very instance without a lease: warn, look again at retryMs',
    state: follower,
    event: lostTo('a n1'),
    next: { view: { role: 'follower', leaderId: 'a', token: 5 } },
    effects: ['call-succeeded', 'publish follower a 5', 'log warn backend reports this candidate as leader without a lease', 'arm 200ms'],
  },
  {
    name: 'follower, campaign lost to another instance with our candidate id: warn once, a duplicate leads',
    state: follower,
    event: lostTo('a n9'),
    next: { leaseEndLook: true, leaseEndLookAt: 1200, duplicate: 'a n9', view: { role: 'follower', leaderId: 'a', token: 5 } },
    effects: ['call-succeeded', 'publish follower a 5', 'log warn another Elector with this candidate id leads this election; candidate ids should be unique', 'arm slot 1200'],
  },
  {
    name: 'follower seeing a duplicate lead, campaign lost to it again: no second warning',
    state: { ...follower, duplicate: 'a n9', view: { role: 'follower', leaderId: 'a', token: 5 } },
    event: lostTo('a n9'),
    next: { leaseEndLook: true, leaseEndLookAt: 1200 },
    effects: ['call-succeeded', 'arm slot 1200'],
  },
  {
    name: 'follower seeing a duplicate lead, campaign lost to b: the duplicate no longer leads',
    state: { ...follower, duplicate: 'a n9' },
    event: lostTo('b n2'),
    next: { leaseEndLook: true, leaseEndLookAt: 1200, duplicate: null, view: { role: 'follower', leaderId: 'b', token: 5 } },
    effects: ['call-succeeded', 'publish follower b 5', 'arm slot 1200'],
  },
  {
    name: 'follower watching a reliable push, campaign lost: look only at the lease end',
    state: follower,
    event: { ...lostTo('b n2'), watching: true } as ElectorEvent,
    config: pushing,
    next: { leaseEndLook: true, leaseEndLookAt: 1310, view: { role: 'follower', leaderId: 'b', token: 5 } },
    effects: ['call-succeeded', 'publish follower b 5', 'arm slot 1310'],
  },
  {
    name: 'starting, first campaign refused for good (never answered): start() rejects, no retry',
    state: starting,
    event: failed(true),
    next: { awaitingFirst: false },
    effects: ['refuse-start'],
  },
  {
    name: 'starting, campaign failed: counted, start() settles, back off',
    state: starting,
    event: failed(false),
    next: { awaitingFirst: false },
    effects: ['call-failed campaign', 'first-outcome', 'arm 100ms'],
  },
  {
    name: 'starting, refused for good after an answer: retried like any failure',
    state: starting,
    event: failed(true, true),
    next: { awaitingFirst: false },
    effects: ['call-failed campaign', 'first-outcome', 'arm 100ms'],
  },
  {
    name: 'follower, campaign failed after a role change (epoch): ignored',
    state: { ...follower, epoch: 5 },
    event: failed(false),
    next: {},
    effects: [],
  },
  // a term
  {
    name: 'leader, term-announced: first renewal on the renew grid, tasks run',
    state: leader,
    event: { type: 'term-announced', token: 7, now: 1000 },
    next: {},
    effects: ['arm slot 1200', 'run-tasks 7'],
  },
  {
    name: 'leader, term-announced of an earlier term: nothing',
    state: leader,
    event: { type: 'term-announced', token: 6, now: 1000 },
    next: {},
    effects: [],
  },
  {
    name: 'leader, renewal answered: the deadline moves (its timer stays armed for the earlier one), next on the grid',
    state: leader,
    event: renewed(1510),
    next: { term: { ...term, deadline: 2450 } },
    effects: ['call-succeeded', 'arm slot 1800'],
  },
  {
    name: 'leader, renewal answered that b holds the lease: revoked (lease-lost), campaign at once',
    state: leader,
    event: renewed(1510, false),
    next: { ...afterRevoke('lease-lost'), view: { role: 'follower', leaderId: 'b', token: null, reason: 'lease-lost' } },
    effects: ['call-succeeded', ...revoked('lease-lost', 'follower', 'b')],
  },
  {
    name: 'leader, renewal answered past the deadline: revoked (lease-expired), the term does not come back',
    state: leader,
    event: renewed(1960),
    next: afterRevoke('lease-expired'),
    effects: ['call-succeeded', ...revoked('lease-expired')],
  },
  {
    name: 'leader, renewal answered after a role change (epoch): ignored',
    state: { ...leader, epoch: 4 },
    event: renewed(1510),
    next: {},
    effects: [],
  },
  {
    name: 'leader, renewal failed: counted, retried at retryMs or a third of what is left',
    state: leader,
    event: { type: 'renewal-failed', epoch: 2, now: 1500, error: new Error('down') },
    next: {},
    effects: ['call-failed renew', 'arm 150ms'],
  },
  {
    name: 'leader, renewal failed at the deadline: revoked (lease-expired)',
    state: leader,
    event: { type: 'renewal-failed', epoch: 2, now: 1950, error: new Error('down') },
    next: afterRevoke('lease-expired'),
    effects: ['call-failed renew', ...revoked('lease-expired')],
  },
  {
    name: 'leader, deadline-reached: revoked (lease-expired), its lease released after the call in flight',
    state: leader,
    event: { type: 'deadline-reached', now: 1950 },
    next: afterRevoke('lease-expired'),
    effects: revoked('lease-expired'),
  },
  {
    name: 'leader renewed since the timer was armed, deadline-reached: armed again for the new deadline',
    state: { ...leader, term: { ...term, deadline: 2450 } },
    event: { type: 'deadline-reached', now: 1950 },
    next: { deadlineArmedAt: 2450 },
    effects: ['deadline 2450'],
  },
  {
    name: 'follower, deadline-reached (a timer of an ended term): nothing',
    state: follower,
    event: { type: 'deadline-reached', now: 1950 },
    next: {},
    effects: [],
  },
  // pushes
  {
    name: 'follower, pushed change: campaign at once',
    state: follower,
    event: { type: 'pushed', now: 1000, busy: false, watching: true },
    next: {},
    effects: ['arm 0ms'],
  },
  {
    name: 'follower holding off after a step-down, pushed change: campaign when the hold-off ends',
    state: { ...follower, holdOffUntil: 1300 },
    event: { type: 'pushed', now: 1000, busy: false, watching: true },
    next: {},
    effects: ['arm 300ms'],
  },
  {
    name: 'leader, pushed change: renew at once',
    state: leader,
    event: { type: 'pushed', now: 1000, busy: false, watching: true },
    next: {},
    effects: ['arm 0ms'],
  },
  {
    name: 'follower, pushed change while a call is in flight: deferred',
    state: follower,
    event: { type: 'pushed', now: 1000, busy: true, watching: true },
    next: {},
    effects: ['defer'],
  },
  { name: 'paused, pushed change: nothing', state: paused, event: { type: 'pushed', now: 1000, busy: false, watching: true }, next: {}, effects: [] },
  {
    name: 'follower looking at the lease end, lease end pushed: the look moves to it',
    state: { ...follower, leaseEndLook: true },
    event: { type: 'pushed', now: 1000, hint: { leaseRemainingMs: 500 }, busy: false, watching: true },
    config: pushing,
    next: { leaseEndLookAt: 1510 },
    effects: ['arm slot 1510'],
  },
  {
    name: 'follower looking at the lease end, timer-fired with a later end kept for it: the look moves there, no campaign',
    state: { ...follower, leaseEndLook: true, leaseEndLookAt: 1000 },
    event: { type: 'timer-fired', now: 1000, busy: false, pushedEnd: 1700, watching: true },
    config: pushing,
    next: { leaseEndLookAt: 1710 },
    effects: ['arm slot 1710'],
  },
  {
    name: 'follower looking at the lease end, timer-fired with an end kept that is due too: campaign',
    state: { ...follower, leaseEndLook: true, leaseEndLookAt: 1000 },
    event: { type: 'timer-fired', now: 1000, busy: false, pushedEnd: 985, watching: true },
    config: pushing,
    next: { leaseEndLook: false, leaseEndLookAt: null },
    effects: ['campaign epoch 1 sent 1000 timeout 950'],
  },
  {
    name: 'follower looking at the lease end, timer-fired with a later end kept while a call is in flight: deferred',
    state: { ...follower, leaseEndLook: true, leaseEndLookAt: 1000 },
    event: { type: 'timer-fired', now: 1000, busy: true, pushedEnd: 1700, watching: true },
    config: pushing,
    next: { leaseEndLook: false, leaseEndLookAt: null },
    effects: ['defer'],
  },
  {
    name: 'leader, timer-fired with a lease end kept: renew (its own lease is not a look)',
    state: leader,
    event: { type: 'timer-fired', now: 1500, busy: false, pushedEnd: 3000, watching: true },
    config: pushing,
    next: {},
    effects: ['renew 7 epoch 2 sent 1500 timeout 450'],
  },
  {
    name: 'follower backing off, lease end pushed: the backoff stays',
    state: follower,
    event: { type: 'pushed', now: 1000, hint: { leaseRemainingMs: 500 }, busy: false, watching: true },
    config: pushing,
    next: {},
    effects: [],
  },
  {
    name: 'follower looking at the lease end, lease end pushed while a call is in flight: ignored',
    state: { ...follower, leaseEndLook: true },
    event: { type: 'pushed', now: 1000, hint: { leaseRemainingMs: 500 }, busy: true, watching: true },
    config: pushing,
    next: {},
    effects: [],
  },
  {
    name: 'follower, a hint from a backend without leaseEndPush: a plain change',
    state: follower,
    event: { type: 'pushed', now: 1000, hint: { leaseRemainingMs: 500 }, busy: false, watching: true },
    next: {},
    effects: ['arm 0ms'],
  },
  // hand-overs
  {
    name: 'follower, term-work-settled: no campaign for two retryMs from now',
    state: handingOver,
    event: { type: 'term-work-settled', now: 1000 },
    next: { holdOffUntil: 1400 },
    effects: [],
  },
  {
    name: 'follower, its latest hand-over done: campaign once the hold-off has passed',
    state: { ...handingOver, holdOffUntil: 1400 },
    event: { type: 'handover-done', id: 1, now: 1000 },
    next: { handover: null },
    effects: ['arm 400ms'],
  },
  {
    name: 'follower, an earlier hand-over done: the latest still runs',
    state: { ...handingOver, handover: 2, handovers: 2 },
    event: { type: 'handover-done', id: 1, now: 1000 },
    next: {},
    effects: [],
  },
  {
    name: 'stopped, its hand-over done: nothing to campaign',
    state: { ...stopped, handover: 1, handovers: 1 },
    event: { type: 'handover-done', id: 1, now: 1000 },
    next: { handover: null },
    effects: [],
  },
  { name: 'follower, expired-term-released: campaign at once', state: follower, event: { type: 'expired-term-released' }, next: {}, effects: ['arm 0ms'] },
  { name: 'stopped, expired-term-released: nothing', state: stopped, event: { type: 'expired-term-released' }, next: {}, effects: [] },
];

describe('the Elector state machine', () => {
  test.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    const before = structuredClone(row.state);
    const { state, effects } = transition(row.state, row.event, row.config ?? config);
    expect(effects.map(line)).toEqual(row.effects);
    expect(state).toEqual({ ...row.state, ...row.next });
    // Pure: the state it was given is unchanged.
    expect(row.state).toEqual(before);
  });

  test('every event type has a row', () => {
    const types: Array<ElectorEvent['type']> = [
      'start',
      'stop',
      'stop-finished',
      'pause',
      'resume',
      'step-down',
      'timer-fired',
      'campaign-answered',
      'campaign-failed',
      'renewal-answered',
      'renewal-failed',
      'deadline-reached',
      'term-announced',
      'pushed',
      'term-work-settled',
      'handover-done',
      'expired-term-released',
    ];
    expect(new Set(rows.map((row) => row.event.type))).toEqual(new Set(types));
  });
});

describe('how the driver takes a pushed lease end (routeLeaseEndHint)', () => {
  const looking: ElectorState = { ...follower, leaseEndLook: true, leaseEndLookAt: 1510 };
  test.each<{ name: string; state: ElectorState; now?: number; left: number; busy?: boolean; config?: MachineConfig; expected: string }>([
    { name: 'a later end than the armed look: kept for it', state: looking, left: 800, expected: 'keep' },
    { name: 'the end the look is armed for: kept (nothing would move)', state: looking, left: 500, expected: 'keep' },
    { name: 'a sooner end (an expiry): a transition now', state: looking, left: 0, expected: 'dispatch' },
    { name: 'a look that waits for a push (nothing armed): a transition now', state: { ...looking, leaseEndLookAt: null }, left: 800, expected: 'dispatch' },
    { name: "a leader's own lease: dropped", state: leader, left: 800, expected: 'drop' },
    { name: 'a follower backing off: dropped', state: follower, left: 800, expected: 'drop' },
    { name: 'a call in flight: dropped (its answer arms the next step)', state: looking, left: 800, busy: true, expected: 'drop' },
    { name: 'a malformed end: dropped', state: looking, left: Number.NaN, expected: 'drop' },
    { name: 'a backend without leaseEndPush: a plain change', state: looking, left: 800, config, expected: 'dispatch' },
  ])('$name', ({ state, now, left, busy, config: c, expected }) => {
    expect(routeLeaseEndHint(state, { now: now ?? 1000, hint: { leaseRemainingMs: left }, busy: busy ?? false }, c ?? pushing)).toBe(expected);
  });

  test('a kept end does what the same end pushed would have done, once the look fires', () => {
    const pushedAt = transition(looking, { type: 'pushed', now: 1000, hint: { leaseRemainingMs: 800 }, busy: false, watching: true }, pushing);
    const kept = transition(looking, { type: 'timer-fired', now: 1510, busy: false, pushedEnd: 1800, watching: true }, pushing);
    expect(kept.effects).toEqual(pushedAt.effects);
    expect(kept.state).toEqual(pushedAt.state);
  });
});
