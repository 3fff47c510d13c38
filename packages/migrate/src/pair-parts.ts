/**
 * The optional parts a MigratingBackend has: outside `dual` those of the one side in use; in
 * `dual` what both sides together allow. Each is built once, with the backend.
 */
import {
  leaderMetadataOf,
  type BackendAdmin,
  type CandidateQueue,
  type ChangeFeed,
  type ElectionBackend,
  type LeaderFeed,
  type LeaderMetadataKept,
  type TokenFloor,
} from '@conclave/core/spi';
import type { DualAdmin } from './dual-admin';
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

/** In `dual`, both sides' admin through `dual` (force and clear on both, either side's trace counts); else the side's. */
export function adminOf(s: Sides, dual: DualAdmin): BackendAdmin | undefined {
  if (s.phase !== 'dual') return single(s).admin;
  if (s.from.admin === undefined || s.to.admin === undefined) return undefined;
  return {
    forceLeader: (election, candidateId, leaseMs) => dual.forceLeader(election, candidateId, leaseMs),
    clearLeader: (election) => dual.clearLeader(election),
    electionExists: (election) => dual.electionExists(election),
  };
}

/** `from`'s queue until `to-only`: the candidates a dual fleet campaigns with first. */
export function candidatesOf(s: Sides): CandidateQueue | undefined {
  return (s.phase === 'to-only' ? s.to : s.from).candidates;
}

/**
 * The sides that push. In `dual`: reliable only if both are; no lease ends (a follower's look
 * waits for both sides' leases, and a lease end pushed by one side says nothing of the other's);
 * a change pushed by `to` also forgets that `to` was taken (see DualCampaign).
 */
export function changesOf(s: Sides, dual: DualState): ChangeFeed | undefined {
  const feeds = sidesInUse(s).flatMap((b) => (b.changes ? [{ side: b, feed: b.changes }] : []));
  if (feeds.length === 0) return undefined;
  if (s.phase !== 'dual') return feeds[0]!.feed;
  const watching = feeds.filter(({ feed }) => feed.isWatching);
  return {
    delivery: feeds.length === 2 && feeds.every(({ feed }) => feed.delivery === 'reliable') ? 'reliable' : 'best-effort',
    leaseEnds: false,
    watch: (election, candidateId, onChange) => {
      const key = termKey(election, candidateId);
      const unwatches = feeds.map(({ side, feed }) =>
        feed.watch(election, candidateId, (hint) => {
          // A lease end pushed by one side is dropped (the follower looks at the lease's end as
          // without it). Never a change: a leader would renew at each of its own renewals.
          if (hint !== undefined) return;
          // `to` changed: it may be free now, look at once (see `campaignDual`).
          if (side === s.to) dual.toBusy.delete(key);
          onChange();
        }),
      );
      return () => unwatches.forEach((unwatch) => unwatch());
    },
    isWatching:
      watching.length === 0 ? undefined : (election, candidateId) => watching.every(({ feed }) => feed.isWatching!(election, candidateId)),
  };
}

/** An observer follows the side `getLeader` reads: `from` until `to-only`. */
export function leaderChangesOf(s: Sides): LeaderFeed | undefined {
  const feed = single(s).leaderChanges;
  if (feed === undefined) return undefined;
  return {
    delivery: feed.delivery,
    watch: (election, onChange) => {
      validate(election);
      return feed.watch(election, onChange);
    },
  };
}

/** Outside `dual` only: a dual term's token is `to`'s, raised to follow `from`'s (see DualCampaign). */
export function tokenFloorOf(s: Sides): TokenFloor | undefined {
  return s.phase === 'dual' ? undefined : single(s).tokenFloor;
}

/** In `dual`, the fields both sides keep (`getLeader` reports either side's); else the side's. */
export function leaderMetadataOfPair(s: Sides): LeaderMetadataKept | undefined {
  if (s.phase !== 'dual') return single(s).leaderMetadata;
  const [a, b] = [leaderMetadataOf(s.from), leaderMetadataOf(s.to)];
  return {
    value: a.value && b.value,
    since: a.since && b.since,
    renewedAt: a.renewedAt && b.renewedAt,
    leaseEndsAt: a.leaseEndsAt && b.leaseEndsAt,
    transitions: a.transitions && b.transitions,
  };
}

/** The longer of the sides' (in `dual`, `getLeader` reads both). */
export function staleLeaderMsOf(s: Sides): number | undefined {
  const values = sidesInUse(s).flatMap((b) => (b.staleLeaderMs === undefined ? [] : [b.staleLeaderMs]));
  return values.length === 0 ? undefined : Math.max(...values);
}
