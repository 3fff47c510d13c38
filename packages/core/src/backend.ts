/**
 * The backend SPI: what a store must offer so that the core `Elector` can run an election on it.
 *
 * Conventions that hold for every method:
 * - Times are milliseconds. Leases are measured on the *server's* clock by the server, and on the
 *   client's monotonic clock by the core; a backend never compares a client wall clock with a
 *   server's.
 * - Election names and candidate ids have been validated by the core (`assertElectionName`,
 *   `assertCandidateId`) before they reach a backend; backends that are also called directly
 *   (admin tools) validate again before any I/O.
 * - Errors: a backend rejects with `ConclaveError` — `BACKEND_UNAVAILABLE` when the server cannot
 *   be reached or did not answer, `BACKEND_ERROR` for other server errors, `NOT_SUPPORTED` for a
 *   call it cannot serve (a capability it does not declare has no method at all), `CLOSED` after
 *   `close()`. It never throws synchronously from an async method and never leaves a rejection
 *   unhandled.
 * - A backend may serve many elections and many candidates of one election in one process, and
 *   may batch calls made in the same event-loop turn into one round trip (see `TickBatcher`).
 * - Instance ids: the `candidateId` of `campaign`, `renew`, `release`, `watch` and `isWatching` is
 *   what the Elector holds leases under, `"<candidate id> <nonce>"` (see instance-id.ts), so two
 *   processes started with one candidate id never share a term. A backend stores and compares it
 *   whole, validates it with `assertInstanceId`, and may report it whole in `CampaignResult` and
 *   `RenewResult` (the core reads the candidate id out of it). Admin answers (`getLeader`,
 *   `listCandidates`) give candidate ids (`candidateOf`). `forceLeader` takes a candidate id; the
 *   lease it creates is adopted, same term, by the first instance of that candidate to campaign
 *   (`mayJoinLease`).
 * - Calls the core gives up on. The core waits for a `campaign`, `renew` or `release` only until
 *   the request's `deadlineMs`; then it aborts the request's `signal`, ignores whatever the call
 *   answers later, and may make its next call for the same instance id at once, while the one it
 *   gave up on is still queued, in flight, or running on the server. A backend may assume that
 *   the core never uses the answer of a call it gave up on, waits for at most one call per
 *   instance id at a time, and releases with the term's token whenever it knows one (a release
 *   without a token only while it holds no term: a follower stopping or pausing). A call given
 *   up on may still take effect on the server, before or after the calls that follow it, and the
 *   backend must keep these true when it does:
 *   - `campaign`: what it took is this instance's own term. The next campaign of the same
 *     instance id joins that term while it is live (same token, lease extended: acquire-or-join),
 *     and starts a new term, with a greater token, only once it has ended. Never two live terms,
 *     never a token lower than one already returned. (Memory, MySQL and single Redis decide a
 *     campaign in one atomic step on the server; ZooKeeper runs a candidate's campaigns and
 *     releases one at a time.) Redlock joins only a term already committed on a majority: two
 *     campaigns of one instance that overlap may each commit a token, and the later, greater one
 *     replaces the earlier on the masters, which then no longer renews. That is the one allowed
 *     departure: still one holder and one live term, and a greater token for it.
 *   - `renew`: extends only the term its token names and never creates a lease, as always.
 *   - `release` with a token: ends only that term, whenever it lands. A new term a later campaign
 *     took has a greater token and survives it; a later campaign that joined the same term loses
 *     it, which is harmless: the core releases a term only once it has given it up, and never
 *     leads a token again.
 *   - `release` without a token ends whatever this instance holds when it lands, so it must not
 *     overtake the calls made after it. ZooKeeper (its per-candidate turns) and Redis (one
 *     connection per master, answered in order) keep a candidate's calls in order, and the
 *     memory backend answers them in call order. MySQL cannot (each call takes its own
 *     connection, so a release that reached a stalled server may run after the campaign that
 *     followed it): it ends no term above the request's `notAbove`, the last token the core led
 *     with, so a term the next campaign takes or joins survives the late release.
 *   A wrapper that makes several calls for one keeps all this too: what it gives back on its own
 *   (`@conclave/migrate`: `from`, once `to` failed) must not end a term the next call joined, so
 *   MigratingBackend runs a candidate's dual campaigns one at a time.
 *   `signal` lets a backend drop work it has not sent yet (a wait for a turn, a subscription, a
 *   pooled connection): honouring it is optional, but a call must still settle, and one that
 *   sees its signal aborted before sending anything rejects with `BACKEND_UNAVAILABLE`, having
 *   changed nothing. Work already sent is never undone on account of the signal.
 */
export interface ElectionBackend {
  /** Short lowercase name of the backend kind (`memory`, `mysql`, `redis`, `zookeeper`), used in logs and errors. */
  readonly kind: string;

  /**
   * What this backend can do beyond the required methods. Declared, never faked. This is the
   * declaration: callers read it (`supports`, `capabilityOf`), never the presence of a method. An
   * optional method that belongs to a capability (`CAPABILITY_METHODS`) exists exactly when the
   * capability is declared (`assertCapabilitiesConsistent` checks it). A property, so that it can
   * be read before any connection is made.
   */
  readonly capabilities: BackendCapabilities;

  /**
   * Acquire-or-join. Takes the lease for `candidateId` if nobody holds a live lease, and registers
   * the candidate where the backend keeps a queue of candidates (ZooKeeper).
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
   * Admin: makes `candidateId` the leader in a new term, ending the current leader's term first.
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
   * Admin: ends the current leader's term, so a new election starts. Like `forceLeader`, the
   * lease is revoked at once (the holder learns at its next renewal) and no new term starts
   * before the revoked lease could have ended on the server; meanwhile nobody leads. Returns
   * without waiting for that. No effect when nobody holds a live lease. The token is not reset:
   * the next term's token is still greater.
   */
  clearLeader(election: string): Promise<void>;

  // The optional methods below are properties that may hold `undefined` (declare new ones the
  // same way): wrappers (ForwardingBackend, MigratingBackend) expose them that way when what they
  // wrap lacks one, and a method-style `name?()` would not accept that under a user's
  // `exactOptionalPropertyTypes`. `listCandidates`, `electionExists`, `raiseTokenFloor`, `watch`
  // and `watchLeader` are there exactly when their capability is declared; `isWatching` only beside `watch`;
  // `staleLeaderMs` is no capability, only a refinement whose absence has a meaning of its own.

  /**
   * The candidates the backend knows of, leader first, in the order they would lead.
   * Exactly when `capabilities.listCandidates` is true.
   */
  listCandidates?: ((election: string) => Promise<string[]>) | undefined;

  /**
   * Whether `election` has ever been used on this store: true from its first campaign (or a
   * `forceLeader` that made a leader, or a raised token floor) on, whether or not anyone leads or
   * campaigns now, releases included; false for a name never used. Reads (`getLeader`,
   * `listCandidates`, `watchLeader`, this call) never make an election exist, nor does a
   * `clearLeader` with no lease to revoke. It turns false again only if the store loses the
   * election's state (a Redis master restarted without persistence, a dropped table). Admin tools
   * use it to tell a misspelt name from an election between terms. Exactly when
   * `capabilities.electionExists` is true.
   */
  electionExists?: ((election: string) => Promise<boolean>) | undefined;

  /**
   * Makes every term that starts after this resolves get a token greater than `token` (the
   * current term, if any, keeps its token). `@conclave/migrate` uses it to keep one increasing
   * sequence of tokens while an election moves between backends. Exactly when
   * `capabilities.tokenFloor` is true.
   */
  raiseTokenFloor?: ((election: string, token: number) => Promise<void>) | undefined;

  /**
   * Subscribes to hints that the leadership of `election` may have changed (a release, a new
   * leader, force or clear, a predecessor gone). Spurious calls are allowed; the core answers
   * each by campaigning (follower) or renewing (leader). Exactly when `capabilities.push` is not
   * `'none'`. Returns the function that unsubscribes; it must release every resource taken.
   *
   * A backend that declares `capabilities.leaseEndPush` may also call `onChange` with a
   * `LeaseEndHint`: not a change of leader, only the current lease's new end (see there). A
   * wrapper passes the hint on as it is, or drops that call; it never turns it into a plain
   * change (a leader would renew at each of its own renewals, which are pushed too).
   */
  watch?: ((election: string, candidateId: string, onChange: (hint?: LeaseEndHint) => void) => () => void) | undefined;

  /**
   * Whether the subscription made by `watch` for this candidate delivers changes right now (its
   * connection is up, it has a slot). While it does not, the core polls at `retryMs`; while it
   * does, a follower looks again only when the current lease can end. Optional: absent means
   * "whenever watched"; never present without `watch`. Synchronous and I/O-free.
   */
  isWatching?: ((election: string, candidateId: string) => boolean) | undefined;

  /**
   * Subscribes an observer (not a candidate: it never campaigns) to hints that the leader of
   * `election` may have changed: a release, a new term, a force or a clear, and, where the store
   * can tell, a lease that ended. Each hint is only a reason to read `getLeader` again; spurious
   * calls are allowed, and hints may come in bursts. Whether a change can go unannounced is
   * declared by `capabilities.leaderPush` (`'best-effort'`: a hint can be lost, e.g. while a
   * connection is down, or a lease that merely expired is not announced, so an observer must
   * also read again now and then; `'reliable'`: every change is announced, and a reconnect counts
   * as a change). A hint also comes once the subscription is in place on the server, so a read
   * made after it misses nothing the subscription would not announce. Exactly when
   * `capabilities.leaderPush` is declared and not `'none'`. Returns the function that
   * unsubscribes; it must release every resource taken (timers, subscriptions).
   */
  watchLeader?: ((election: string, onChange: () => void) => () => void) | undefined;

  /**
   * How long, ms, `getLeader` may go on naming a leader whose process has died, when that can be
   * longer than the lease it held: ZooKeeper shows a node until its session expires. Absent: no
   * longer than that lease. `@conclave/migrate` uses it to tell a dead candidate, still shown,
   * from one that is alive and leads. Synchronous and I/O-free.
   */
  staleLeaderMs?: (() => number) | undefined;

  /**
   * Closes what the backend opened itself (pools, clients, sessions created from a URL/settings).
   * A client the user passed in is never closed. Idempotent. Outstanding leases are not released
   * here: the Elector releases its own on `stop()`.
   */
  close(): Promise<void>;
}

/**
 * Optional abilities, declared by each backend so the core and the conformance suite know. Each
 * flag with a method (`CAPABILITY_METHODS`) is that method's one declaration: the method exists
 * exactly when the flag declares it. Read them with `supports` / `capabilityOf`.
 */
export interface BackendCapabilities {
  /** `listCandidates()` is implemented (and present exactly then). */
  listCandidates: boolean;
  /**
   * How changes reach followers:
   * - `'none'`: no `watch()`; the core polls at `retryMs` (or sooner, see `leaseRemainingMs`).
   * - `'best-effort'`: `watch()` wakes followers at once, but a hint can be lost (a dropped
   *   connection). While `isWatching()` holds, the core looks again when the current lease can
   *   end (`leaseRemainingMs`), so a lost hint costs at most that lease; otherwise it polls at
   *   `retryMs`.
   * - `'reliable'`: `watch()` never misses a change (ZooKeeper watches); the core does not poll
   *   beyond `leaseRemainingMs` when given.
   */
  push: 'none' | 'best-effort' | 'reliable';
  /**
   * How changes of the leader reach an observer through `watchLeader()`; the same scale as `push`
   * (`'best-effort'`: a change can go unannounced; `'reliable'`: none does). Absent means
   * `'none'`: no `watchLeader()`, an observer polls `getLeader`.
   */
  leaderPush?: 'none' | 'best-effort' | 'reliable';
  /** `raiseTokenFloor()` is implemented (and present exactly then). Absent means false. */
  tokenFloor?: boolean;
  /**
   * `electionExists()` is implemented (and present exactly then): the store keeps a trace of an
   * election once used, so a name never used can be told from an election between terms.
   * Absent means false.
   */
  electionExists?: boolean;
  /**
   * A new term's token may jump to the server's clock in ms (Redis `tokenClockFloor`), far above
   * the previous term's token. Tokens still increase; but another backend cannot follow them
   * (`@conclave/migrate` refuses such a `to` beside a `from` that cannot raise its floor).
   * Absent means false.
   */
  tokenClock?: boolean;
  /**
   * `watch()` may also push the current lease's end (`LeaseEndHint`: the leader renewed, or its
   * lease expired), so that a follower whose push is live need not look at each lease end: it
   * moves its look to the end pushed, and sends nothing while renewals keep coming. Whether hints
   * actually come may depend on the server at run time (Redis: its keyspace notifications); when
   * none come, the follower looks at the lease end as without this. Needs `push`. Absent means
   * false: the core takes a hint as a plain change.
   */
  leaseEndPush?: boolean;
  /**
   * Which of `LeaderInfo`'s optional fields `getLeader()` reports. A field declared false is never
   * reported (absent); absent means none is kept.
   */
  leaderMetadata?: LeaderMetadataCapabilities;
}

/**
 * The leader metadata a backend keeps, field by field (see `LeaderInfo`). A field declared true
 * is reported by `getLeader()` whenever the backend has it for the current term (`value` only
 * when the leader published one); a field declared false is never reported.
 */
export interface LeaderMetadataCapabilities {
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
export function leaderMetadataOf(capabilities: BackendCapabilities): LeaderMetadataCapabilities {
  return { ...NO_LEADER_METADATA, ...capabilities.leaderMetadata };
}

/** The `leaderMetadata` of a backend that keeps none. */
export const NO_LEADER_METADATA: Readonly<LeaderMetadataCapabilities> = Object.freeze({
  value: false,
  since: false,
  renewedAt: false,
  leaseEndsAt: false,
  transitions: false,
});

/** When the core gives up on a call: shared by campaign, renew and release requests. */
export interface CallGiveUp {
  /**
   * Aborted when the core gives up on this call (see "Calls the core gives up on" above); its
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
   * keeps it (`capabilities.leaderMetadata.value`). A candidacy sends the same value with every
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
 * Passed to a `watch` callback by a backend that declares `capabilities.leaseEndPush`: the current
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
 * backend keeps them (`capabilities.leaderMetadata`); absent means the backend cannot tell.
 * Times are the server's clock, ms since the Unix epoch: compare them with each other, not with
 * a client's clock.
 */
export interface LeaderInfo {
  candidateId: string;
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
