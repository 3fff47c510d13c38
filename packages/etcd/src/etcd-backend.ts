import { performance } from 'node:perf_hooks';
import type { Etcd3, IKeyValue, IRangeResponse, KVClient, LeaseClient } from 'etcd3';
import {
  ConclaveError,
  assertCandidateId,
  assertElectionName,
  assertInstanceId,
  assertLeaderValue,
  assertPositiveInteger,
  assertReleaseBounds,
  assertRequestToken,
  candidateOf,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';
import { throwIfGivenUp } from '@conclave/core/internal';
import { resolveEtcdOptions, type EtcdBackendOptions, type EtcdClient } from './etcd-options';
import { openEtcdClient } from './etcd-client';
import { ElectionKeys, EtcdStore, cmp, decodeCandidate, encodeCandidate, op, type CandidateValue } from './etcd-store';
import { SharedLease } from './etcd-leases';
import { CandidateTurns } from './etcd-turns';
import { PredecessorWatches } from './etcd-watches';
import { EtcdAdmin, MAX_ROUNDS } from './etcd-admin';
import { ElectionReads, floorOffset, infoOf, leaderOf } from './etcd-reads';

export { MAX_FLOOR } from './etcd-admin';

const KIND = 'etcd';

/** A candidacy of this process: its key's create revision and the lease it is attached to. */
interface Candidacy {
  revision: number;
  lease: SharedLease;
  leaseId: string;
  /** Token offset once the candidacy led (its term's token is offset + revision). */
  offset: number | null;
}

/**
 * Leader election on etcd with its election recipe: each candidate puts a key under the
 * election's prefix, attached to an etcd lease, with a create-only transaction; the key with the
 * lowest create revision leads; each follower watches only its predecessor's key, so a departure
 * wakes one candidate, not the herd.
 *
 * - Token: the leader key's create revision (cluster-wide, strictly increasing), plus the token
 *   floor's offset recorded in the key when its term started (see `raiseTokenFloor`; 0 unless raised).
 * - Lease: etcd leases have a TTL in whole seconds: a lease of `leaseMs` asks for
 *   `floor(leaseMs / 1000)` s. The lease granted to the core is the TTL the server answered (never
 *   more than asked), counted from when the last keep-alive was sent. One etcd lease per TTL is
 *   shared by every election of the backend and kept alive for all at once (see `SharedLease`).
 * - Force and clear delete the leader's key and leave a *fence*, a key on a lease of its own that
 *   outlives the revoked holder's lease; no new term starts while it is there.
 */
export class EtcdBackend implements ElectionBackend {
  readonly kind = KIND;
  /** What every EtcdBackend declares (known before any connection). */
  static readonly capabilities: BackendCapabilities = Object.freeze({
    listCandidates: true,
    push: 'best-effort' as const,
    tokenFloor: true,
    // The value is in the leader's key; etcd keeps no times a client could read as server time,
    // and create revisions do not count terms.
    leaderMetadata: Object.freeze({ value: true, since: false, renewedAt: false, leaseEndsAt: false, transitions: false }),
  });
  readonly capabilities: BackendCapabilities = EtcdBackend.capabilities;

  private readonly client: EtcdClient;
  private readonly ownsClient: boolean;
  private readonly keys: ElectionKeys;
  private readonly store: EtcdStore;
  private readonly leases = new Map<number, SharedLease>();
  private readonly candidacies = new Map<string, Candidacy>();
  private readonly turns = new CandidateTurns();
  private readonly watches: PredecessorWatches;
  private readonly reads: ElectionReads;
  private readonly admin: EtcdAdmin;
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
    this.watches = new PredecessorWatches(this.client as unknown as Etcd3, this.store, this.keys);
    this.reads = new ElectionReads(this.store, this.keys);
    this.admin = new EtcdAdmin(this.store, this.keys, this.reads, (election) => this.assertOpen(election));
  }

  /** The TTL, s, asked for a lease of `leaseMs`: whole seconds, never longer than the lease. */
  static ttlFor(leaseMs: number): number {
    return Math.floor(leaseMs / 1000);
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
      const store = this.store.within(deadlineMs);
      const lease = this.leaseFor(EtcdBackend.ttlFor(leaseMs));
      const leaseId = await store.bounded(lease.ensure(), 'lease grant', election);
      const mine: CandidateValue = value === undefined ? { id: candidateId } : { id: candidateId, v: value };
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const reads = [op.head(this.keys.candidates(election)), op.get(this.keys.fence(election)), op.get(this.keys.floor(election)), op.get(key)];
        const res = await store
          .txn([cmp.createIs(key, 0)], [op.put(key, encodeCandidate(mine), leaseId), ...reads], reads, 'campaign', election)
          .catch((err: unknown) => {
            // The lease lapsed on the server while this process held no key on it.
            if (/lease not found/i.test(String((err as { message?: unknown }).message))) lease.reset();
            throw err;
          });
        const ranges = res.responses.map((r) => r.response_range).filter((r): r is IRangeResponse => r !== undefined && r !== null);
        const [headRange, fenceRange, floorRange, mineRange] = ranges.slice(-4);
        const own = mineRange?.kvs[0];
        if (!own) continue; // deleted between the put and the read: an admin; look again
        const candidacy = this.adopt(key, own, lease, leaseId);
        if (!candidacy) {
          // Our key sits on a lease this process no longer keeps alive: it will go; replace it.
          await store.txn([cmp.createIs(key, own.create_revision)], [op.del(key)], [], 'campaign', election);
          continue;
        }
        this.watches.moved(election, candidateId);
        const head = headRange?.kvs[0];
        const fence = fenceRange?.kvs[0];
        if (head?.key.toString() !== key || fence) {
          return { role: 'follower', ...leaderOf(head, fence) };
        }
        if (candidacy.offset === null) {
          const floor = floorRange?.kvs[0];
          const offset = floorOffset(floor);
          const confirmed = await store.txn(
            [cmp.createIs(key, candidacy.revision), cmp.createIs(this.keys.fence(election), 0), cmp.modIs(this.keys.floor(election), floor?.mod_revision ?? 0)],
            [op.put(key, encodeCandidate({ ...mine, o: offset }), candidacy.leaseId)],
            [],
            'campaign',
            election,
          );
          if (!confirmed.succeeded) continue;
          candidacy.offset = offset;
        }
        const live = await store.bounded(candidacy.lease.fresh(start), 'lease keep-alive', election).catch((err: unknown) => {
          throw this.leaseError(err, election);
        });
        if (live.id !== candidacy.leaseId) continue;
        return { role: 'leader', token: candidacy.offset + candidacy.revision, leaseMs: grantedFrom(start, live) };
      }
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'campaign: the election kept changing; try again', { backend: KIND, election });
    });
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
    const [read, live] = await Promise.all([
      store.range(key, {}, election),
      store.bounded(candidacy.lease.fresh(start), 'lease keep-alive', election).then(
        (l) => l,
        (err: unknown) => (err instanceof ConclaveError && err.code === 'LEASE_LOST' ? null : Promise.reject(this.leaseError(err, election))),
      ),
    ]);
    const own = read.kvs[0];
    if (!live || !own || Number(own.create_revision) !== candidacy.revision || live.id !== candidacy.leaseId || String(own.lease) !== live.id) {
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

  async listCandidates(election: string): Promise<string[]> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return (await this.reads.candidates(election)).map((c) => candidateOf(c.value.id));
  }

  async clearLeader(election: string): Promise<void> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return this.admin.clear(election);
  }

  async forceLeader(election: string, candidateId: string, _leaseMs?: number): Promise<LeaderInfo> {
    assertElectionName(election, KIND);
    assertCandidateId(candidateId, KIND, election);
    this.assertOpen(election);
    return this.admin.force(election, candidateId);
  }

  async raiseTokenFloor(election: string, token: number): Promise<void> {
    assertElectionName(election, KIND);
    this.assertOpen(election);
    return this.admin.raiseTokenFloor(election, token);
  }

  watch(election: string, candidateId: string, onChange: () => void): () => void {
    this.validate(election, candidateId);
    this.assertOpen(election);
    return this.watches.watch(election, candidateId, onChange);
  }

  isWatching(election: string, candidateId: string): boolean {
    return this.watches.isWatching(election, candidateId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.watches.close(Math.min(this.requestTimeoutMs, 1_000));
    const leases = [...this.leases.values()];
    this.leases.clear();
    this.candidacies.clear();
    // Keys of a client we opened go with its leases; a user's client keeps them until their TTL.
    await Promise.all(leases.map((l) => l.close(this.ownsClient)));
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
        : { revision, lease: holder, leaseId: ownLease, offset: value?.o ?? null };
    if (candidacy.offset === null && value?.o !== undefined) candidacy.offset = value.o;
    if (known && known !== candidacy) known.lease.unhold(key);
    this.candidacies.set(key, candidacy);
    holder.hold(key);
    return candidacy;
  }

  private forget(key: string): void {
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
    return new ConclaveError('BACKEND_UNAVAILABLE', `etcd lease keep-alive failed: ${String(err)}`, { backend: KIND, election, cause: err });
  }
}

/**
 * The lease granted to the core for a call started at `start`: the key lives at least until the
 * keep-alive's `sentAt + ttlMs`, and no earlier keep-alive than `start` can be counted on past that.
 */
function grantedFrom(start: number, live: { sentAt: number; ttlMs: number }): number {
  return Math.max(0, Math.floor(Math.min(live.sentAt, start) + live.ttlMs - start));
}
