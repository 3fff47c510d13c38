/**
 * The backend contract: what a store must offer so that the core `Elector` can run an election
 * on it. A backend is a required **lease store** (`kind`, `campaign`, `renew`, `release`,
 * `getLeader`, `close`: what carries the guarantees) plus optional **parts**, each an object
 * whose presence is its declaration: `admin` (force, clear, existence), `candidates` (the
 * queue), `changes` (push to candidates), `leaderChanges` (push to observers), `tokenFloor`
 * (used by migrations), and two plain declarations, `leaderMetadata` and `staleLeaderMs`.
 * Callers test a part's presence, never anything else.
 *
 * The rules every backend keeps (times, errors, instance ids, calls the core gives up on,
 * releases that land out of order, token floors) are in the package's BACKEND-CONTRACT.md,
 * next to this file; the conformance suite (`@conclave/test-harness`) checks them.
 *
 * Optional parts are properties that may hold `undefined` (declare new ones the same way):
 * wrappers expose them that way when what they wrap lacks one, and `part?: T` alone would not
 * accept that under a user's `exactOptionalPropertyTypes`.
 */
export interface LeaseStore {
  /** Short lowercase name of the backend kind (`memory`, `mysql`, `redis`, …), used in logs and errors. */
  readonly kind: string;

  /**
   * Acquire-or-join. Takes the lease for `candidateId` if nobody holds a live lease, and registers
   * the candidate where the backend keeps a queue of candidates (ZooKeeper, etcd).
   *
   * - If the lease is free (absent, released or expired on the server's clock), the candidate
   *   takes it and a **new term** starts: the returned `token` is strictly greater than every
   *   token ever returned for this election.
   * - If `candidateId` already holds a live lease (e.g. an earlier answer was lost), the current
   *   term goes on: same token, lease extended.
   * - Otherwise the candidate is a follower; the current leader is reported when known.
   *
   * The granted `leaseMs` is measured from the moment the request was sent; it may be shorter
   * than asked (a ZooKeeper session timeout, Redlock's drift allowance) and never longer. The core
   * subtracts the time the call took itself: a backend must not subtract it again.
   */
  campaign(request: CampaignRequest): Promise<CampaignResult>;

  /**
   * Extends the lease of the term identified by `token`, only if `candidateId` still holds it.
   * Returns `held: false` when the lease was taken over, released, cleared or forced to another
   * candidate (revoked: refused at once, even while the revoked lease still runs on the server).
   * Must not create a lease that does not exist.
   */
  renew(request: RenewRequest): Promise<RenewResult>;

  /**
   * Gives up leadership (only if `candidateId` holds it; with a token, only that term) and
   * withdraws the candidacy. Idempotent: releasing what is not held resolves without effect.
   * A foreign candidate's lease is never touched.
   */
  release(request: ReleaseRequest): Promise<void>;

  /** The current leader as the server sees it, or `null` when nobody holds a live lease. */
  getLeader(election: string): Promise<LeaderInfo | null>;

  /**
   * Closes what the backend opened itself (pools, clients, sessions created from a URL/settings).
   * A client the user passed in is never closed. Idempotent. Outstanding leases are not released
   * here: the Elector releases its own on `stop()`.
   */
  close(): Promise<void>;
}

/** A lease store and the optional parts it has. See `LeaseStore` for the layering. */
export interface ElectionBackend extends LeaseStore {
  /** Admin operations (the `conclave` command's `force`, `clear`, `status`). */
  readonly admin?: BackendAdmin | undefined;
  /** The queue of candidates, where the backend keeps one. */
  readonly candidates?: CandidateQueue | undefined;
  /** Push of changes to candidates; without it the core polls at `retryMs`. */
  readonly changes?: ChangeFeed | undefined;
  /** Push of changes of the leader to observers; without it an observer polls `getLeader`. */
  readonly leaderChanges?: LeaderFeed | undefined;
  /** A floor under the next term's token; `@conclave/migrate` needs it. */
  readonly tokenFloor?: TokenFloor | undefined;
  /** Which of `LeaderInfo`'s optional fields `getLeader()` reports. Absent: none. */
  readonly leaderMetadata?: LeaderMetadataKept | undefined;
  /**
   * How long, ms, `getLeader` may go on naming a leader whose process has died, when that can be
   * longer than the lease it held: ZooKeeper shows a node until its session expires. Absent: no
   * longer than that lease. `@conclave/migrate` uses it to tell a dead candidate, still shown,
   * from one that is alive and leads.
   */
  readonly staleLeaderMs?: number | undefined;
}

/** The admin part: operations an operator runs, never the Elector. */
export interface BackendAdmin {
  /**
   * Makes `candidateId` the leader in a new term, ending the current leader's term first.
   * The current lease is revoked at once: its holder's renewals are refused, so it learns at its
   * next renewal and steps down. The new term starts only once the revoked lease could have ended
   * on the server; since an Elector's deadline always falls before its lease's end, the two terms
   * never overlap. So this may take up to one lease to return (a free or expired lease is forced
   * at once). The new term's token is still strictly greater than every earlier one. The forced
   * lease lasts `leaseMs` (default: the backend's default lease) unless the candidate renews it.
   * Forcing the candidate that holds the lease keeps it leading, in its term. A backend that can
   * only promote a candidate that is campaigning (ZooKeeper: a node belongs to its session)
   * rejects any other id with `NOT_SUPPORTED`. Rejects with `BACKEND_UNAVAILABLE` if other
   * candidates keep taking the lease between the revocation and the new term.
   */
  forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo>;

  /**
   * Ends the current leader's term, so a new election starts. Like `forceLeader`, the lease is
   * revoked at once (the holder learns at its next renewal) and no new term starts before the
   * revoked lease could have ended on the server; meanwhile nobody leads. Returns without
   * waiting for that. No effect when nobody holds a live lease. The token is not reset: the next
   * term's token is still greater.
   */
  clearLeader(election: string): Promise<void>;

  /**
   * Whether `election` has ever been used on this store: true from its first campaign (or a
   * `forceLeader` that made a leader, or a raised token floor) on, whether or not anyone leads or
   * campaigns now, releases included; false for a name never used. Reads (`getLeader`, the
   * candidate list, `leaderChanges`, this call) never make an election exist, nor does a
   * `clearLeader` with no lease to revoke. It turns false again only if the store loses the
   * election's state (a Redis master restarted without persistence, a dropped table). Admin tools
   * use it to tell a misspelt name from an election between terms.
   */
  electionExists(election: string): Promise<boolean>;
}

/** The candidate-queue part. */
export interface CandidateQueue {
  /** The candidates the backend knows of (candidate ids), leader first, in the order they would lead. */
  list(election: string): Promise<string[]>;
}

/** How changes reach a subscriber: a hint can be lost (`'best-effort'`) or none is (`'reliable'`). */
export type Delivery = 'best-effort' | 'reliable';

/** The push part for candidates. */
export interface ChangeFeed {
  /**
   * - `'best-effort'`: `watch()` wakes followers at once, but a hint can be lost (a dropped
   *   connection). While `isWatching()` holds, the core looks again when the current lease can
   *   end (`leaseRemainingMs`), so a lost hint costs at most that lease; otherwise it polls at
   *   `retryMs`.
   * - `'reliable'`: `watch()` never misses a change (ZooKeeper, etcd watches); the core does not
   *   poll beyond `leaseRemainingMs` when given.
   */
  readonly delivery: Delivery;
  /**
   * Whether `watch()` may also push the current lease's end (`LeaseEndHint`: the leader renewed,
   * or its lease expired), so that a follower whose push is live need not look at each lease
   * end: it moves its look to the end pushed, and sends nothing while renewals keep coming.
   * Whether hints actually come may depend on the server at run time (Redis: its keyspace
   * notifications); when none come, the follower looks at the lease end as without this. False:
   * the core takes every hint as a plain change.
   */
  readonly leaseEnds: boolean;
  /**
   * Subscribes to hints that the leadership of `election` may have changed (a release, a new
   * leader, force or clear, a predecessor gone). Spurious calls are allowed; the core answers
   * each by campaigning (follower) or renewing (leader). With `leaseEnds`, `onChange` may get a
   * `LeaseEndHint`: not a change of leader, only the current lease's new end. A wrapper passes
   * the hint on as it is, or drops that call; it never turns it into a plain change (a leader
   * would renew at each of its own renewals, which are pushed too). Returns the function that
   * unsubscribes; it must release every resource taken.
   */
  watch(election: string, candidateId: string, onChange: (hint?: LeaseEndHint) => void): () => void;
  /**
   * Whether the subscription made by `watch` for this candidate delivers changes right now (its
   * connection is up, it has a slot). While it does not, the core polls at `retryMs`; while it
   * does, a follower looks again only when the current lease can end. Absent: "whenever
   * watched". Synchronous and I/O-free.
   */
  readonly isWatching?: ((election: string, candidateId: string) => boolean) | undefined;
}

/** The push part for observers (an observer never campaigns). */
export interface LeaderFeed {
  /**
   * `'best-effort'`: a change can go unannounced (a hint lost while a connection is down, or a
   * lease that merely expired not announced), so an observer must also read again now and then;
   * `'reliable'`: every change is announced, and a reconnect counts as a change.
   */
  readonly delivery: Delivery;
  /**
   * Subscribes to hints that the leader of `election` may have changed: a release, a new term, a
   * force or a clear, and, where the store can tell, a lease that ended. Each hint is only a
   * reason to read `getLeader` again; spurious calls are allowed, and hints may come in bursts.
   * A hint also comes once the subscription is in place on the server, so a read made after it
   * misses nothing the subscription would not announce. Returns the function that unsubscribes;
   * it must release every resource taken (timers, subscriptions).
   */
  watch(election: string, onChange: () => void): () => void;
}

/** The token-floor part: one increasing sequence of tokens while an election moves between backends. */
export interface TokenFloor {
  /**
   * Makes every term that starts after this resolves get a token greater than `token` (the
   * current term, if any, keeps its token).
   */
  raise(election: string, token: number): Promise<void>;
  /**
   * A new term's token may jump to the server's clock in ms (Redis `tokenClockFloor`), far above
   * the previous term's token. Tokens still increase; but another backend cannot follow them
   * (`@conclave/migrate` refuses such a `to` beside a `from` without a token floor).
   */
  readonly followsClock: boolean;
}

/**
 * The leader metadata a backend keeps, field by field (see `LeaderInfo`). A field declared true
 * is reported by `getLeader()` whenever the backend has it for the current term (`value` only
 * when the leader published one); a field declared false is never reported.
 */
export interface LeaderMetadataKept {
  /** The value published with the leader's candidacy (`CampaignRequest.value`). */
  value: boolean;
  /** When the current term started, server time. */
  since: boolean;
  /** When the leader last took, joined or renewed its lease, server time. */
  renewedAt: boolean;
  /** When the current lease ends unless renewed, server time. */
  leaseEndsAt: boolean;
  /** How many terms the election has had. */
  transitions: boolean;
}

/** A backend's `leaderMetadata`, with every field false when it declares none. */
export function leaderMetadataOf(backend: Pick<ElectionBackend, 'leaderMetadata'>): LeaderMetadataKept {
  return { ...NO_LEADER_METADATA, ...backend.leaderMetadata };
}

/** The `leaderMetadata` of a backend that keeps none. */
export const NO_LEADER_METADATA: Readonly<LeaderMetadataKept> = Object.freeze({
  value: false,
  since: false,
  renewedAt: false,
  leaseEndsAt: false,
  transitions: false,
});

/** When the core gives up on a call: shared by campaign, renew and release requests. */
export interface CallGiveUp {
  /**
   * Aborted when the core gives up on this call (see "Calls the core gives up on" in BACKEND-CONTRACT.md); its
   * reason is the error the core reports. Optional: absent for callers that never give up.
   * Successive calls of one Elector that each ended before the core gave up on them share one
   * signal: a backend removes the listeners it adds to it by the time its call has settled.
   */
  signal?: AbortSignal | undefined;
  /** When the core will give up on this call, `performance.now()` ms. Absent: no deadline. */
  deadlineMs?: number | undefined;
}

export interface CampaignRequest extends CallGiveUp {
  election: string;
  candidateId: string;
  /** Lease length asked for, ms. */
  leaseMs: number;
  /**
   * A small value published with the candidacy (an address, a URL), at most
   * `MAX_LEADER_VALUE_BYTES` UTF-8 bytes; `getLeader()` reports the leader's where the backend
   * keeps it (`leaderMetadata.value`). A candidacy sends the same value with every
   * campaign (the Elector does); absent means none. Backends that keep values refuse one that is
   * too long with `INVALID_OPTIONS` before any I/O; the others ignore it.
   */
  value?: string;
}

export type CampaignResult =
  | {
      role: 'leader';
      /** Fencing token of this term: strictly greater than any earlier term's. */
      token: number;
      /** Lease granted, ms, counted from when the request was sent. */
      leaseMs: number;
    }
  | {
      role: 'follower';
      /** The current leader, when the backend knows it. */
      leaderId: string | null;
      /** The current leader's token, when known. */
      token: number | null;
      /**
       * Time left on the current leader's lease by the server's clock, ms, when the backend
       * can tell. The core uses it to try again right when the lease can end, instead of polling.
       */
      leaseRemainingMs?: number;
    };

/**
 * Passed to a `changes.watch` callback by a backend whose `changes.leaseEnds` is true: the current
 * leader's lease was extended (a renewal) or ended (an expiry: `leaseRemainingMs` 0), and nothing
 * else changed that a campaign would learn sooner. `leaseRemainingMs` is, as in `CampaignResult`,
 * the time the lease can still run as near as the backend can tell, counted from the call; a
 * backend that cannot tell exactly errs long only by its delivery delay (a longer hint delays a
 * take-over after a crash, a shorter one costs a campaign). Pacing only: a hint that is lost,
 * late or wrong never makes two leaders, since every campaign is decided by the server.
 */
export interface LeaseEndHint {
  leaseRemainingMs: number;
}

export interface RenewRequest extends CallGiveUp {
  election: string;
  candidateId: string;
  /** The token of the term being renewed. */
  token: number;
  /** Lease length asked for, ms. */
  leaseMs: number;
}

export type RenewResult =
  | { held: true; /** Lease granted, ms, counted from when the request was sent. */ leaseMs: number }
  | { held: false; /** Who holds it now, when known. */ leaderId: string | null };

export interface ReleaseRequest extends CallGiveUp {
  election: string;
  candidateId: string;
  /** When set, release only if this term is still the current one. */
  token?: number | null;
  /**
   * Without `token`: the greatest token the caller has led with in this election (0 when none). A backend whose calls of one instance can land out of order on the server
   * (MySQL: each call on its own connection, so a release that reached a stalled server may run
   * after the campaign that followed it) must not end a term above it: such a term was taken
   * after the release was decided, or never reached the caller (it then ends with its lease).
   * Absent: no bound (an admin's release).
   */
  notAbove?: number | undefined;
}

/**
 * The current leader as the server sees it. The optional fields are present only where the
 * backend keeps them (`leaderMetadata`); absent means the backend cannot tell.
 * Times are the server's clock, ms since the Unix epoch: compare them with each other, not with
 * a client's clock.
 */
export interface LeaderInfo {
  /** The leader's candidate id (without the instance nonce the Elector adds). */
  candidateId: string;
  /** The fencing token of the current term. */
  token: number;
  /** The value the leader published with its candidacy; absent when it published none. */
  value?: string;
  /** When the current term started (the leader took the lease), server time, ms epoch. */
  since?: number;
  /** When the leader last took, joined or renewed its lease, server time, ms epoch. */
  renewedAt?: number;
  /** When the lease ends unless renewed, server time, ms epoch. */
  leaseEndsAt?: number;
  /** How many terms (changes of leader, forced ones included) the election has had, this one included. */
  transitions?: number;
}
