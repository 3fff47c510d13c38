/**
 * What a MigratingBackend declares it can do, and the optional methods that go with it: outside
 * `dual` those of the one side in use; in `dual` what both sides together allow.
 */
import { capabilityOf, supports, type BackendCapabilities, type ElectionBackend } from '@conclave/core/spi';
import type { DualState } from './dual-state';
import type { MigrationPhase } from './migration-options';
import { termKey, validate } from './side-requests';

/** The phase and the two sides it chooses between. */
export interface Sides {
  phase: MigrationPhase;
  from: ElectionBackend;
  to: ElectionBackend;
}

/** The one backend used outside `dual`. */
export function single({ phase, from, to }: Sides): ElectionBackend {
  return phase === 'to-only' ? to : from;
}

/** The sides a candidate uses: both in `dual`, else the one. */
function sidesInUse(s: Sides): ElectionBackend[] {
  return s.phase === 'dual' ? [s.from, s.to] : [single(s)];
}

export function capabilitiesOf(s: Sides): BackendCapabilities {
  return s.phase === 'dual' ? dualCapabilities(s.from, s.to) : single(s).capabilities;
}

function dualCapabilities(from: ElectionBackend, to: ElectionBackend): BackendCapabilities {
  const pushes = [from, to].map((b) => capabilityOf(b, 'push'));
  const push = pushes.every((p) => p === 'reliable') ? 'reliable' : pushes.some((p) => p !== 'none') ? 'best-effort' : 'none';
  // Observers follow `from` in dual, as `getLeader` does.
  const leaderPush = capabilityOf(from, 'leaderPush');
  const [a, b] = [capabilityOf(from, 'leaderMetadata'), capabilityOf(to, 'leaderMetadata')];
  const leaderMetadata = {
    value: a.value && b.value,
    since: a.since && b.since,
    renewedAt: a.renewedAt && b.renewedAt,
    leaseEndsAt: a.leaseEndsAt && b.leaseEndsAt,
    transitions: a.transitions && b.transitions,
  };
  // No leaseEndPush: a follower's look waits for both sides' leases, and watch passes no hints.
  const electionExists = capabilityOf(from, 'electionExists') && capabilityOf(to, 'electionExists');
  return { listCandidates: capabilityOf(from, 'listCandidates'), electionExists, push, leaderPush, tokenFloor: false, leaderMetadata };
}

export function listCandidatesOf(s: Sides): ElectionBackend['listCandidates'] {
  const side = s.phase === 'to-only' ? s.to : s.from;
  return supports(side, 'listCandidates') ? (election) => side.listCandidates!(election) : undefined;
}

/** In `dual`, used on either side (both must be able to tell); otherwise on the side in use. */
export function electionExistsOf(s: Sides): ElectionBackend['electionExists'] {
  const sides = sidesInUse(s);
  if (!sides.every((b) => supports(b, 'electionExists'))) return undefined;
  if (sides.length === 1) return (election) => sides[0]!.electionExists!(election);
  return async (election) => (await Promise.all(sides.map((b) => b.electionExists!(election)))).some(Boolean);
}

/** In `dual`, a change pushed by `to` also forgets that `to` was taken (see DualCampaign). */
export function watchOf(s: Sides, dual: DualState): ElectionBackend['watch'] {
  const sides = sidesInUse(s).filter((b) => supports(b, 'push'));
  if (sides.length === 0) return undefined;
  return (election, candidateId, onChange) => {
    const key = termKey(election, candidateId);
    const unwatches = sides.map((b) =>
      b.watch!(
        election,
        candidateId,
        s.phase !== 'dual'
          ? onChange
          : (hint) => {
              // A lease end pushed by one side says nothing of the other's: dropped (the follower
              // looks at the lease's end as without it). Never a change: a leader would renew at
              // each of its own renewals.
              if (hint !== undefined) return;
              // `to` changed: it may be free now, look at once (see `campaignDual`).
              if (b === s.to) dual.toBusy.delete(key);
              onChange();
            },
      ),
    );
    return () => unwatches.forEach((unwatch) => unwatch());
  };
}

/** The longer of the sides' (in `dual`, `getLeader` reads both). */
export function staleLeaderMsOf(s: Sides): ElectionBackend['staleLeaderMs'] {
  const sides = sidesInUse(s).filter((b) => b.staleLeaderMs);
  if (sides.length === 0) return undefined;
  return () => Math.max(...sides.map((b) => b.staleLeaderMs!()));
}

/** An observer follows the side `getLeader` reads: `from` until `to-only`. */
export function watchLeaderOf(s: Sides): ElectionBackend['watchLeader'] {
  const side = single(s);
  if (!supports(side, 'leaderPush')) return undefined;
  return (election, onChange) => {
    validate(election);
    return side.watchLeader!(election, onChange);
  };
}

/** Never without `watch` (see `watchOf`: the sides that push). */
export function isWatchingOf(s: Sides): ElectionBackend['isWatching'] {
  const sides = sidesInUse(s).filter((b) => supports(b, 'push'));
  if (!sides.some((b) => b.isWatching)) return undefined;
  return (election, candidateId) => sides.every((b) => !b.isWatching || b.isWatching(election, candidateId));
}

/** Outside `dual` only: `dual` declares no `tokenFloor` (see `dualCapabilities`). */
export function raiseTokenFloorOf(s: Sides): ElectionBackend['raiseTokenFloor'] {
  if (s.phase === 'dual') return undefined;
  const side = single(s);
  return supports(side, 'tokenFloor') ? (election, token) => side.raiseTokenFloor!(election, token) : undefined;
}
