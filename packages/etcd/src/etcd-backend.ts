import { performance } from 'node:perf_hooks';
import type { ICompare, IKeyValue, IRangeResponse, IRequestOp, KVClient, LeaseClient, WatchClient } from 'etcd3';
import { ConclaveError } from '@conclave/core';
import {
  CampaignSlots,
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  candidateOf,
  throwIfGivenUp,
  type BackendAdmin,
  type CandidateQueue,
  type ChangeFeed,
  type TokenFloor,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
  type LeaderMetadataKept,
} from '@conclave/core/spi';
import { resolveEtcdOptions, type EtcdBackendOptions, type EtcdClient } from './etcd-options';
import { openEtcdClient } from './etcd-client';
import { ElectionKeys, EtcdStore, cmp, decodeCandidate, encodeCandidate, op, type CandidateValue } from './etcd-store';
import { etcdErrorCode } from './etcd-errors';
import { SharedLease, grantedFrom, type LiveLease } from './etcd-leases';
import { KeepAliveStream } from './etcd-keepalive-stream';
import { releaseHandingOver, type HandoverHint, type TxnSender } from './etcd-handoff';
import { CandidateTurns } from './etcd-turns';
import { TxnBatches } from './etcd-txn-batches';
import { OwnKeyChecks, ownKey, type OwnKey } from './etcd-own-keys';
import { PredecessorWatches, type SeenTarget } from './etcd-watches';
import { WatchStream } from './etcd-watch-stream';
import { EtcdAdmin, MAX_ROUNDS } from './etcd-admin';
import { ElectionReads, floorMark, floorOffset, infoOf, leaderOf } from './etcd-reads';

export { MAX_FLOOR } from './etcd-admin';

const KIND = 'etcd';
/** Operations one transaction may hold (etcd's --max-txn-ops default). */
const MAX_TXN_OPS = 128;
/**
 * How long after its TTL ran out etcd may still hold an expired lease's keys, ms: its lessor
 * checks for expired leases on a 500 ms loop (etcd 3.4 to 3.6), then revokes them through Raft.
 */
const REVOKE_LAG_MS = 500;

/** A candidacy of this process: its key's create revision and the lease it is attached to. */
interface Candidacy {
  revision: number;
  lease: SharedLease;
  leaseId: string;
  /** Token offset once the candidacy's term started (its term's token is offset + revision). */
  offset: number | null;
  /** What its last won campaign read, for its release (see `releaseHandingOver`). */
  handover?: HandoverHint;
  /** What its renewals check of its key (made once: a leader of thousands renews thousands of times a second). */
  own: OwnKey;
  /** The token floor as its last campaign read it at `revision` (the key absent: `kv` undefined), for `startingRound`. */
  floorSeen?: { kv: IKeyValue | undefined; revision: number };
}

/**
 * Leader election on etcd with its election recipe: each candidate puts a key under the
 * election's prefix, attached to an etcd lease, with a create-only transaction; the key with the
 * lowest create revision leads; each follower watches only its predecessor's key, so a departure
 * wakes one candidate, not the herd.
 *
 * - Token: the leader key's create revision (cluster-wide, strictly increasing), plus the token
 *   floor's offset recorded in the key when its term started (see `raiseTokenFloor`; 0 unless raised).
 * - Lease: etcd leases have a TTL in whole seconds, and etcd deletes an expired lease's keys up
 *   to half a second after its TTL ran out (see `ttlFor`): a lease of `leaseMs` asks for
 *   `floor((leaseMs - 500) / 1000)` s, at least 1. The lease granted to the core is the TTL the
 *   server answered (never more than asked), counted from when the last keep-alive was sent. One
 *   etcd lease per TTL is shared by every election of the backend and kept alive for all at once
 *   (see `SharedLease`).
 * - Force and clear delete the leader's key and leave a *fence*, a key on a lease of its own that
 *   outlives the revoked holder's lease; no new term starts while it is there.
 */
export class EtcdBackend implements ElectionBackend {
  readonly kind = KIND;
  // The value is in the leader's key; etcd keeps no times a client could read as server time,
  // and create revisions do not count terms.
  /** Which leader fields `getLeader()` reports (see `LeaderMetadataKept`). */
  readonly leaderMetadata: LeaderMetadataKept = Object.freeze({ value: true, since: false, renewedAt: false, leaseEndsAt: false, transitions: false });
  readonly admin: BackendAdmin = {
    forceLeader: (election, candidateId, leaseMs) => this.forceLeader(election, candidateId, leaseMs),
    clearLeader: (election) => this.clearLeader(election),
    electionExists: (election) => this.electionExists(election),
  };
  readonly candidates: CandidateQueue = { list: (election) => this.listCandidates(election) };
  /** Reliable: a watch misses nothing while it stands, and its loss wakes the candidate (PredecessorWatches). */
  readonly changes: ChangeFeed = {
    delivery: 'reliable',
    leaseEnds: false,
    watch: (election, candidateId, onChange) => this.watch(election, candidateId, onChange),
    isWatching: (election, candidateId) => this.isWatching(election, candidateId),
  };
  readonly tokenFloor: TokenFloor = { raise: (election, token) => this.raiseTokenFloor(election, token), followsClock: false };

  private readonly client: EtcdClient;
  private readonly ownsClient: boolean;
  private readonly keys: ElectionKeys;
  private readonly store: EtcdStore;
  private readonly leases = new Map<number, SharedLease>();
  private readonly candidacies = new Map<string, Candidacy>();
  /** Candidate keys whose last campaign, a follower's, showed no leader (see isWatching). */
  private readonly leaderless = new Set<string>();
  private readonly turns = new CandidateTurns();
  private readonly watchStream: WatchStream;
  private readonly watches: PredecessorWatches;
  private readonly reads: ElectionReads;
  private readonly etcdAdmin: EtcdAdmin;
  private readonly keepAlives: KeepAliveStream;
  /** The checks of the renewals of one turn, one transaction (see renew). */
  private readonly ownKeys: OwnKeyChecks;
  private readonly slots = new CampaignSlots(KIND);
  /** The campaigns' transactions of one turn, sent together (see TxnBatches). */
  private readonly campaigns: TxnBatches;
  /**
   * The releases' transactions of one turn, sent together: a process whose renewals came too late
   * for thousands of terms at once (a stalled event loop) releases them all in the same turn.
   */
  private readonly releases: TxnBatches;
  private readonly warned = new Set<string>();
  private readonly requestTimeoutMs: number;
  private closed = false;

  /** Validates options (INVALID_OPTIONS, INVALID_NAME); does no I/O. */
  constructor(options: EtcdBackendOptions) {
    const resolved = resolveEtcdOptions(options);
    this.requestTimeoutMs = resolved.requestTimeoutMs;
    if (resolved.mode === 'client') {
      this.client = resolved.client;
      this.ownsClient = false;
    } else {
      this.client = openEtcdClient(resolved) as unknown as EtcdClient;
      this.ownsClient = true;
    }
    this.keys = new ElectionKeys(resolved.prefix);
    this.store = new EtcdStore(this.client.kv as KVClient, this.client.leaseClient as LeaseClient, resolved.requestTimeoutMs);
    this.watchStream = new WatchStream(this.client.watchClient as WatchClient);
    this.watches = new PredecessorWatches(this.watchStream, this.store, new TxnBatches(this.store, MAX_TXN_OPS, 'list'), this.keys, (election, instanceId) => {
      return this.candidacies.get(this.keys.candidate(election, instanceId))?.revision ?? null;
    });
    this.reads = new ElectionReads(this.store, this.keys);
    this.etcdAdmin = new EtcdAdmin(this.store, this.keys, this.reads, (election) => this.assertOpen(election));
    this.keepAlives = new KeepAliveStream(this.client.leaseClient as LeaseClient, resolved.requestTimeoutMs);
    this.campaigns = new TxnBatches(this.store, MAX_TXN_OPS, 'campaign');
    this.releases = new TxnBatches(this.store, MAX_TXN_OPS, 'release');
    this.ownKeys = new OwnKeyChecks(this.store, MAX_TXN_OPS);
  }

  /**
   * The TTL, s, asked for a lease of `leaseMs`: whole seconds, never longer than the lease, and
   * short enough that the key is gone within `leaseMs` of the last keep-alive the server handled:
   * etcd's lessor looks for expired leases every `REVOKE_LAG_MS` and only then revokes them.
   * Below 2 500 ms the TTL is 1 s, the shortest there is: a crashed leader's key then goes
   * within 1.5 s of its last keep-alive, later than `leaseMs` under 1 500 ms.
   */
  static ttlFor(leaseMs: number): number {
    return Math.max(1, Math.floor((leaseMs - REVOKE_LAG_MS) / 1000));
  }

  async campaign({ election, candidateId, leaseMs, value, signal, deadlineMs }: CampaignRequest): Promise<CampaignResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    if (leaseMs < 1000) {
      throw new ConclaveError('INVALID_OPTIONS', `leaseMs must be at least 1000 on etcd (lease TTLs are whole seconds), got ${leaseMs}`, {
        backend: KIND,
        election,
      });
    }
    if (value !== undefined) assertLeaderValue(value, KIND, election);
    const key = this.keys.candidate(election, candidateId);
    return this.turns.run(key, async () => {
      this.assertOpen(election);
      throwIfGivenUp(signal, 'campaign', KIND, election);
      const start = performance.now();
      const until = deadlineMs ?? start + this.requestTimeoutMs;
      // Its turn first (nothing is sent while it waits), then a slot (see CampaignSlots).
      const free = await this.slots.acquire(election, until, signal);
      try {
        const mine: CandidateValue = value === undefined ? { id: candidateId } : { id: candidateId, v: value };
        return await this.campaignRounds(election, key, mine, EtcdBackend.ttlFor(leaseMs), start, this.store.within(deadlineMs));
      } finally {
        free(signal?.aborted === true || performance.now() > until);
      }
    });
  }

  /**
   * A campaign's rounds. A candidacy of this process whose key should still be there starts with
   * a read of the queue's first two keys, the fence, the floor and its key (see `startingRound`:
   * it may start the term in the same transaction), with a keep-alive sent beside it unless a
   * recent one leaves enough lease (see `SharedLease.lasting`); otherwise, or when the key is
   * gone, a round creates the key if there is none and reads the same in one transaction. If the
   * key heads the queue with no fence, its term starts: at once when its token offset is written
   * already (a hand-over wrote it, see `releaseHandingOver`), else by a write of the offset.
   */
  private async campaignRounds(election: string, key: string, mine: CandidateValue, ttlSec: number, start: number, store: EtcdStore): Promise<CampaignResult> {
    const lease = this.leaseFor(ttlSec);
    const leaseId = await lease.ensure(store, election);
    const fenceKey = this.keys.fence(election);
    const floorKey = this.keys.floor(election);
    const reads = [op.queue(this.keys.candidates(election), 2), op.get(fenceKey), op.get(floorKey), op.get(key)];
    let early: Promise<LiveLease> | null = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const prior = this.candidacies.get(key);
      const known = round === 0 && prior?.leaseId === leaseId;
      if (known) {
        early = lease.lasting(start);
        early.catch(() => undefined); // awaited only if this campaign leads
      }
      const [compare, success, failure] = known
        ? this.startingRound(election, key, mine, prior, reads)
        : [[cmp.createIs(key, 0)], [op.put(key, encodeCandidate(mine), leaseId), ...reads], reads];
      const res = await this.campaigns.txn(store, election, compare, success, failure).catch((err: unknown) => {
        // The lease lapsed on the server while this process held no key on it.
        if (/lease not found/i.test(String((err as { message?: unknown }).message))) lease.reset();
        throw err;
      });
      const ranges = res.responses.map((r) => r.response_range).filter((r): r is IRangeResponse => r !== undefined && r !== null);
      const [headRange, fenceRange, floorRange, mineRange] = ranges.slice(-4);
      const own = mineRange?.kvs[0];
      if (!own) continue; // deleted since it was created or last read (an admin): look again
      const candidacy = this.adopt(key, own, lease, leaseId);
      if (!candidacy) {
        // Our key sits on a lease this process no longer keeps alive: it will go; replace it.
        await store.txn([cmp.createIs(key, own.create_revision)], [op.del(key)], [], 'campaign', election);
        continue;
      }
      candidacy.floorSeen = { kv: floorRange?.kvs[0], revision: Number(res.header.revision) };
      const head = headRange?.kvs[0];
      const fence = fenceRange?.kvs[0];
      this.watches.moved(election, mine.id, candidacy.revision, seenTarget(key, fenceKey, headRange, fence !== undefined, String(res.header.revision)));
      if (head?.key.toString() !== key || fence) {
        const seen = leaderOf(head, fence);
        if (seen.leaderId === null) this.leaderless.add(key);
        else this.leaderless.delete(key);
        return { role: 'follower', ...seen };
      }
      if (candidacy.offset === null) {
        early ??= candidacy.lease.lasting(start);
        early.catch(() => undefined);
        const starting = this.termStart(election, key, mine, candidacy, floorRange?.kvs[0]);
        const confirmed = await this.campaigns.txn(store, election, starting.compare, starting.puts, []);
        if (!confirmed.succeeded) continue;
        candidacy.offset = starting.offset;
      }
      const live = await store.bounded(early ?? candidacy.lease.lasting(start), 'lease keep-alive', election).catch((err: unknown) => {
        throw this.leaseError(err, election);
      });
      if (live.id !== candidacy.leaseId) continue;
      candidacy.handover = { next: headRange?.kvs[1], floor: floorRange?.kvs[0] };
      this.leaderless.delete(key);
      return { role: 'leader', token: candidacy.offset + candidacy.revision, leaseMs: grantedFrom(start, live) };
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'campaign: the election kept changing; try again', { backend: KIND, election });
  }

  /**
   * The first round of a candidacy this process knows, as a transaction's compares, success and
   * failure operations: `reads`, and nothing else unless its term has not started, its last
   * campaign saw the token floor, and the process's watch, up since that read, saw no change of
   * its key. Then the transaction starts the term (writes the token offset into the key) when the
   * key heads the queue (no key under the election's candidates was created before it), with no
   * fence, and the floor as last seen; else it only reads, as the plain round does. A successor
   * woken by its predecessor's crash so leads after one round trip instead of two, and the round
   * is a single operation in its batch (`TxnBatches`), not one per read. (A hand-over writes the
   * successor's offset: the watch saw its key change, and the campaign only reads, with no Raft
   * proposal; without a watch to tell, it reads too.)
   */
  private startingRound(election: string, key: string, mine: CandidateValue, candidacy: Candidacy, reads: IRequestOp[]): [ICompare[], IRequestOp[], IRequestOp[]] {
    const floor = candidacy.floorSeen;
    if (candidacy.offset !== null || floor === undefined || this.watches.changedAfter(key, floor.revision) !== false) return [[], reads, []];
    const starting = this.termStart(election, key, mine, candidacy, floor.kv);
    return [[...starting.compare, cmp.noneCreatedBefore(this.keys.candidates(election), candidacy.revision)], [...starting.puts, ...reads], reads];
  }

  /**
   * What starts `candidacy`'s term once its key heads the queue: compares that the key is still
   * the one created at its revision, that there is no fence and that the token floor is still
   * `floor`; and the write of its token `offset`, counted from that floor, into the key (with the
   * floor itself when there is none yet, see `floorMark`).
   */
  private termStart(election: string, key: string, mine: CandidateValue, candidacy: Candidacy, floor: IKeyValue | undefined): { compare: ICompare[]; puts: IRequestOp[]; offset: number } {
    const offset = floorOffset(floor);
    const floorKey = this.keys.floor(election);
    return {
      compare: [cmp.createIs(key, candidacy.revision), cmp.createIs(this.keys.fence(election), 0), cmp.modIs(floorKey, floor?.mod_revision ?? 0)],
      puts: [op.put(key, encodeCandidate({ ...mine, o: offset }), candidacy.leaseId), ...floorMark(floorKey, floor)],
      offset,
    };
  }

  async renew({ election, candidateId, token, leaseMs, signal, deadlineMs }: RenewRequest): Promise<RenewResult> {
    this.validate(election, candidateId);
    assertPositiveInteger(leaseMs, 'leaseMs', KIND);
    assertRequestToken(token, KIND, election);
    this.assertOpen(election);
    throwIfGivenUp(signal, 'renew', KIND, election);
    const key = this.keys.candidate(election, candidateId);
    const candidacy = this.candidacies.get(key);
    if (!candidacy || candidacy.offset === null || candidacy.offset + candidacy.revision !== token) {
      return { held: false, leaderId: await this.reads.leaderId(election) };
    }
    const start = performance.now();
    const store = this.store.within(deadlineMs);
    // The keep-alive first: written at once on its stream, it leaves with the turn's checks (one
    // transaction for every renewal of the turn), one round trip for all.
    // One bound for both (a leader of thousands renews thousands of times a second).
    const [live, held] = await store.bounded(
      Promise.all([
        candidacy.lease.fresh(start).then(
          (l) => l,
          (err: unknown) => (err instanceof ConclaveError && err.code === 'LEASE_LOST' ? null : Promise.reject(this.leaseError(err, election))),
        ),
        this.ownKeys.check(candidacy.own),
      ]),
      'renew',
      election,
    );
    if (!live || !held || live.id !== candidacy.leaseId) {
      this.forget(key);
      return { held: false, leaderId: await this.reads.leaderId(election) };
    }
    return { held: true, leaseMs: grantedFrom(start, live) };
  }

  async release({ election, candidateId, token, notAbove, signal, deadlineMs }: ReleaseRequest): Promise<void> {
    this.validate(election, candidateId);
    assertReleaseBounds(token, notAbove, KIND, election);
    this.assertOpen(election);
    const key = this.keys.candidate(election, candidateId);
    return this.turns.run(key, async () => {
      throwIfGivenUp(signal, 'release', KIND, election);
      const store = this.store.within(deadlineMs);
      if (token === undefined || token === null) {
        await store.txn([], [op.del(key)], [], 'release', election);
        this.forget(key);
        return;
      }
      const known = this.candidacies.get(key);
      if (known?.offset !== null && known !== undefined && known.offset + known.revision === token) {
        // Our term's key, as this process made it: delete it unless it was replaced.
        const batched: TxnSender = { txn: (compare, success, failure) => this.releases.txn(store, election, compare, success, failure) };
        if (await releaseHandingOver(batched, this.keys, election, key, known.revision, known.handover)) {
          this.forget(key);
          return;
        }
      }
      const read = await store.range(key, {}, election);
      const own = read.kvs[0];
      if (!own) {
        this.forget(key);
        return;
      }
      const value = decodeCandidate(own);
      if (value?.o === undefined || value.o + Number(own.create_revision) !== token) return; // another term
      const res = await store.txn([cmp.createIs(key, own.create_revision)], [op.del(key)], [], 'release', election);
      if (res.succeeded) this.forget(key);
    });
  }

  async getLeader(election: string): Promise<LeaderInfo | null> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    const { head, fence } = await this.reads.head(election);
    return infoOf(head, fence);
  }

  private async listCandidates(election: string): Promise<string[]> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return (await this.reads.candidates(election)).map((c) => candidateOf(c.value.id));
  }

  /**
   * Any key under the election: a candidate's, a fence, or the token floor, which its first term
   * writes (`floorMark`) and nothing deletes.
   */
  private async electionExists(election: string): Promise<boolean> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return (await this.store.range(this.keys.root(election), { prefix: true, limit: 1, keysOnly: true }, election)).kvs.length > 0;
  }

  private async clearLeader(election: string): Promise<void> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return this.etcdAdmin.clear(election);
  }

  private async forceLeader(election: string, candidateId: string, _leaseMs?: number): Promise<LeaderInfo> {
    assertElectionName(election, KIND);
    assertCandidateId(candidateId, KIND, election);
    this.assertOpen(election);
    return this.etcdAdmin.force(election, candidateId);
  }

  private async raiseTokenFloor(election: string, token: number): Promise<void> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return this.etcdAdmin.raiseTokenFloor(election, token);
  }

  private watch(election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    this.assertOpen(election);
    return this.watches.watch(election, candidateId, onChange);
  }

  private isWatching(election: string, candidateId: string): boolean {
    // A watch wakes a follower when its predecessor goes, not when a term starts: while its last
    // read showed no leader (the head's term not started yet, or a fence), the core polls.
    return !this.leaderless.has(this.keys.candidate(election, candidateId)) && this.watches.isWatching(election, candidateId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watches.close();
    this.watchStream.close();
    const leases = [...this.leases.values()];
    this.leases.clear();
    this.candidacies.clear();
    // Keys of a client we opened go with its leases; a user's client keeps them until their TTL.
    await Promise.all(leases.map((l) => l.close(this.ownsClient)));
    this.keepAlives.close();
    if (this.ownsClient) this.client.close();
  }

  // ---- internals ----

  private validate(election: string, candidateId: string): void {
    assertElectionName(election, KIND);
    assertInstanceId(candidateId, KIND, election);
  }

  private assertOpen(election?: string): void {
    if (this.closed) throw new ConclaveError('CLOSED', 'the backend was closed', { backend: KIND, election });
  }

  private leaseFor(ttlSec: number): SharedLease {
    let lease = this.leases.get(ttlSec);
    if (!lease) {
      lease = new SharedLease(
        this.store,
        this.keepAlives,
        ttlSec,
        () => this.leaseLost(lease!),
        (asked, granted) => this.checkGrant(asked, granted),
      );
      this.leases.set(ttlSec, lease);
    }
    return lease;
  }

  /** Records the candidacy `own` (our key) unless its lease is not the one this process keeps alive. */
  private adopt(key: string, own: IKeyValue, lease: SharedLease, leaseId: string): Candidacy | null {
    const revision = Number(own.create_revision);
    const ownLease = String(own.lease);
    const holder = ownLease === leaseId ? lease : [...this.leases.values()].find((l) => l.isCurrent(ownLease));
    if (!holder) return null;
    const known = this.candidacies.get(key);
    const value = decodeCandidate(own);
    const candidacy: Candidacy =
      known && known.revision === revision
        ? known
        : { revision, lease: holder, leaseId: ownLease, offset: value?.o ?? null, own: ownKey(key, revision) };
    if (candidacy.offset === null && value?.o !== undefined) candidacy.offset = value.o;
    if (known && known !== candidacy) known.lease.unhold(key);
    this.candidacies.set(key, candidacy);
    holder.hold(key);
    return candidacy;
  }

  private forget(key: string): void {
    this.leaderless.delete(key);
    const known = this.candidacies.get(key);
    if (!known) return;
    this.candidacies.delete(key);
    known.lease.unhold(key);
  }

  /** A lease expired on the server: every candidacy on it lost its key; wake every watcher. */
  private leaseLost(lease: SharedLease): void {
    for (const [key, c] of this.candidacies) if (c.lease === lease) this.candidacies.delete(key);
    this.watches.notifyAll();
  }

  private checkGrant(askedSec: number, grantedSec: number): void {
    if (grantedSec > askedSec) {
      this.warnOnce(
        'CONCLAVE_ETCD_TTL_CLAMPED',
        `etcd granted a ${grantedSec} s lease where ${askedSec} s was asked (the server's minimum lease TTL, about 1.5 × its election timeout, is higher): ` +
          `a crashed leader is replaced only after up to ${grantedSec} s. Lower the cluster's --election-timeout or ask for a longer lease.`,
      );
    }
  }

  /** A process warning (stderr by default, `process.on('warning')` to route it), once per code. */
  private warnOnce(code: string, message: string): void {
    if (this.warned.has(code)) return;
    this.warned.add(code);
    process.emitWarning(message, { type: 'ConclaveWarning', code });
  }

  private leaseError(err: unknown, election: string): ConclaveError {
    if (err instanceof ConclaveError) return err;
    return new ConclaveError(etcdErrorCode(err), `etcd lease keep-alive failed: ${String(err)}`, { backend: KIND, election, cause: err });
  }
}

/** What the campaign's read of the queue's first two keys shows `key` has to watch, if it shows it. */
function seenTarget(key: string, fenceKey: string, queue: IRangeResponse | undefined, fenced: boolean, revision: string): SeenTarget | undefined {
  const [head, next] = queue?.kvs ?? [];
  if (head?.key.toString() === key) return { target: fenceKey, head: true, existed: fenced, revision };
  if (head && next?.key.toString() === key) return { target: head.key.toString(), head: false, existed: true, revision };
  return undefined;
}
