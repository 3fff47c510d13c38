import { ConclaveError } from '@conclave/core';
import { FORCE_ATTEMPTS, candidateOf, type LeaderInfo } from '@conclave/core/spi';
import type { IKeyValue } from 'etcd3';
import { type Candidate, type ElectionReads, floorMark, floorOffset, infoOf, rangeOf } from './etcd-reads';
import { type ElectionKeys, type EtcdStore, cmp, decodeCandidate, encodeCandidate, op } from './etcd-store';

const KIND = 'etcd';
/** Rounds a campaign or an admin call makes when the keys keep changing under it. */
export const MAX_ROUNDS = 8;
/** The highest token floor accepted: tokens are floor + create revision, and revisions need room above it. */
export const MAX_FLOOR = Math.floor(Number.MAX_SAFE_INTEGER / 2);
/** How often forceLeader looks whether the fence it left is gone, ms. */
const FENCE_POLL_MS = 100;

/**
 * The admin operations of the etcd backend: clear and force (a fence that outlives the revoked
 * holder's lease, so no new term starts before it could have ended) and the token floor. The
 * caller has validated the arguments and checked that the backend is open.
 */
export class EtcdAdmin {
  constructor(
    private readonly store: EtcdStore,
    private readonly keys: ElectionKeys,
    private readonly reads: ElectionReads,
    /** Throws CLOSED once the backend is closed (checked while waiting out a fence). */
    private readonly assertOpen: (election: string) => void,
  ) {}

  /** Ends the current term (a fence until its lease could have ended); nothing when nobody leads. */
  async clear(election: string): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { head, fence } = await this.reads.head(election);
      if (fence || !head || decodeCandidate(head)?.o === undefined) return; // nobody leads
      if (await this.revoke(election, [head], null)) return;
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'clearLeader: the election kept changing; try again', { backend: KIND, election });
  }

  /** Makes `candidateId`, campaigning, the leader: those ahead of it revoked, then its term installed once the fence is gone. */
  async force(election: string, candidateId: string): Promise<LeaderInfo> {
    for (let attempt = 0; attempt < FORCE_ATTEMPTS; attempt++) {
      const queue = await this.reads.candidates(election);
      const at = queue.findIndex((c) => candidateOf(c.value.id) === candidateId);
      if (at < 0) {
        throw new ConclaveError(
          'NOT_SUPPORTED',
          `forceLeader: ${JSON.stringify(candidateId)} is not campaigning; etcd can only promote a candidate whose key exists (its lease is its own)`,
          { backend: KIND, election },
        );
      }
      const target = queue[at]!;
      if (at > 0 && !(await this.revoke(election, queue.slice(0, at), target))) continue;
      await this.waitForFence(election);
      const installed = await this.install(election, target);
      if (installed) return installed;
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', `forceLeader: the election kept changing (${FORCE_ATTEMPTS} attempts); try again`, {
      backend: KIND,
      election,
    });
  }

  /** Raises the offset every later term's token is counted from (never lowers it). */
  async raiseTokenFloor(election: string, token: number): Promise<void> {
    if (!Number.isSafeInteger(token) || token < 0 || token > MAX_FLOOR) {
      throw new ConclaveError('INVALID_OPTIONS', `token floor must be a whole number from 0 to ${MAX_FLOOR}, got ${String(token)}`, {
        backend: KIND,
        election,
      });
    }
    const floorKey = this.keys.floor(election);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const floor = (await this.store.range(floorKey, {}, election)).kvs[0];
      // A term that starts later gets offset + create revision ≥ offset + 1.
      if (floorOffset(floor) >= token) return;
      const res = await this.store.txn([cmp.modIs(floorKey, floor?.mod_revision ?? 0)], [op.put(floorKey, Buffer.from(String(token)))], [], 'raiseTokenFloor', election);
      if (res.succeeded) return;
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'the token floor kept changing; try again', { backend: KIND, election });
  }

  /**
   * Deletes `ahead` (the head first) in one transaction, checking that none changed and that
   * `target` is still there, and, when the head's term had started, leaves a fence that outlives
   * the head's lease: the fence's lease is granted with one second more than the head lease's
   * TTL, and kept alive once after the deletion, so it ends after anything the head's holder
   * may still count on (its keep-alives were all sent before the deletion). False when something
   * changed meanwhile (look again).
   */
  private async revoke(election: string, ahead: Array<IKeyValue | Candidate>, target: Candidate | null): Promise<boolean> {
    const kvs = ahead.map((a) => ('kv' in a ? a.kv : a));
    const head = kvs[0]!;
    const started = decodeCandidate(head)?.o !== undefined;
    const fenceKey = this.keys.fence(election);
    let fenceLease: string | null = null;
    if (started) {
      const ttl = await this.store.timeToLive(String(head.lease));
      if (ttl.ttlSec < 0) return false; // its lease is gone (TTL -1): the key goes with it
      fenceLease = (await this.store.grant(Math.max(1, ttl.grantedSec) + 1)).id;
    }
    const compare = kvs.map((kv) => cmp.modIs(kv.key.toString(), kv.mod_revision));
    if (target) compare.push(cmp.createIs(target.key, target.revision));
    if (fenceLease !== null) compare.push(cmp.createIs(fenceKey, 0));
    const success = kvs.map((kv) => op.del(kv.key.toString()));
    if (fenceLease !== null) success.push(op.put(fenceKey, Buffer.from(JSON.stringify({ revoked: head.create_revision })), fenceLease));
    const res = await this.store.txn(compare, success, [], target ? 'forceLeader' : 'clearLeader', election);
    if (!res.succeeded) {
      if (fenceLease !== null) await this.store.revoke(fenceLease).catch(() => undefined);
      return false;
    }
    if (fenceLease !== null) await this.store.keepAlive(fenceLease).catch(() => undefined);
    return true;
  }

  /** Waits until no fence is left (its lease ended on the server). */
  private async waitForFence(election: string): Promise<void> {
    const fenceKey = this.keys.fence(election);
    for (;;) {
      this.assertOpen(election);
      const fence = (await this.store.range(fenceKey, {}, election)).kvs[0];
      if (!fence) return;
      await new Promise((r) => setTimeout(r, FENCE_POLL_MS));
    }
  }

  /** Starts `target`'s term now that it heads the queue (or finds it started). Null: look again. */
  private async install(election: string, target: Candidate): Promise<LeaderInfo | null> {
    const res = await this.store.txn(
      [],
      [op.head(this.keys.candidates(election)), op.get(this.keys.fence(election)), op.get(this.keys.floor(election))],
      [],
      'forceLeader',
      election,
    );
    const head = rangeOf(res, 0)?.kvs[0];
    const fence = rangeOf(res, 1)?.kvs[0];
    const floor = rangeOf(res, 2)?.kvs[0];
    if (!head || fence || head.key.toString() !== target.key || Number(head.create_revision) !== target.revision) return null;
    const value = decodeCandidate(head);
    if (!value) return null;
    if (value.o !== undefined) return infoOf(head, undefined);
    const offset = floorOffset(floor);
    const confirmed = await this.store.txn(
      [cmp.modIs(target.key, head.mod_revision), cmp.createIs(this.keys.fence(election), 0), cmp.modIs(this.keys.floor(election), floor?.mod_revision ?? 0)],
      [op.put(target.key, encodeCandidate({ ...value, o: offset }), String(head.lease)), ...floorMark(this.keys.floor(election), floor)],
      [],
      'forceLeader',
      election,
    );
    if (!confirmed.succeeded) return null;
    return { candidateId: candidateOf(value.id), token: offset + target.revision, ...(value.v !== undefined ? { value: value.v } : {}) };
  }
}
