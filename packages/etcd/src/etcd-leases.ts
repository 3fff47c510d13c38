import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import type { EtcdStore, LeaseProof } from './etcd-store';
import type { KeepAliveStream } from './etcd-keepalive-stream';

const KIND = 'etcd';
/** A keep-alive unanswered this long, at least, makes the stream count as stuck, ms. */
const STALL_MIN_MS = 250;
/** How soon a failed background keep-alive is tried again, ms. */
const RETRY_MS = 200;
/** A renewal counts on a keep-alive answered that was sent at most this long before it, ms. */
export const REUSE_MS = 100;

/** A keep-alive the server answered: the lease lives at least until `sentAt + ttlMs`. */
export interface LiveLease {
  id: string;
  sentAt: number;
  /** What the core may count on, ms: the smaller of the TTL asked for and the TTL answered. */
  ttlMs: number;
}

/**
 * One etcd lease shared by every candidacy of a backend that asked for the same TTL, kept alive
 * for all of them at once: the keep-alives of a process do not grow with its elections.
 *
 * Why this is safe: etcd deletes a key attached to a lease only when the lease expires (or is
 * revoked), and it expires no sooner than TTL after the server handled the last keep-alive
 * (etcd's lessor; a new etcd leader extends every lease). So a key attached to the lease lives at
 * least until `sentAt + TTL` of any keep-alive answered with that TTL, on this process's clock.
 *
 * Keep-alives, on the backend's one keep-alive stream: one on demand for a renewal when none was
 * sent in the last `REUSE_MS` (a renewal joins a keep-alive already in flight), and one in
 * the background when none was sent for half the TTL (it keeps followers' keys; a failed one is
 * tried again soon). Electors of one lease renew on a shared grid, so their renewals of one round
 * share one keep-alive, and a leader renewing more often than that leaves the background nothing
 * to send.
 */
export class SharedLease {
  private id: string | null = null;
  private granting: Promise<string> | null = null;
  private last: LeaseProof | null = null;
  private inFlight: { sentAt: number; promise: Promise<LiveLease> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Candidacies with a key on this lease (the background keep-alive runs while there are any). */
  private readonly holders = new Set<string>();
  private closed = false;

  constructor(
    private readonly store: EtcdStore,
    private readonly keepAlives: KeepAliveStream,
    readonly ttlSec: number,
    private readonly onLost: () => void,
    private readonly onGranted: (askedSec: number, grantedSec: number) => void,
  ) {}

  /**
   * The lease id to attach a new key to, granting the lease first when there is none; callers
   * meanwhile share the grant in flight, each waiting for it until it gives up (`store`'s
   * deadline). One that gives up stops the sharing: the next caller sends a grant of its own. A
   * grant caught in a change of Raft leader is lost with the old leader and waits for the
   * request timeout, and every campaign of the process waited with it; a new grant goes through
   * the new leader. The grant given up on still runs: when the commit was only slow, it is the
   * lease, unless another was granted first (then it is revoked).
   */
  async ensure(store: EtcdStore, election: string): Promise<string> {
    if (this.closed) throw new ConclaveError('CLOSED', 'the backend was closed', { backend: KIND });
    if (this.id !== null) return this.id;
    const granting = this.granting ?? this.grant();
    return store.bounded(granting, 'lease grant', election).catch((err: unknown) => {
      if (this.granting === granting) this.granting = null;
      throw err;
    });
  }

  /** Sends a grant, shared until it ends or a caller gives up on it. */
  private grant(): Promise<string> {
    const granting = this.store.grant(this.ttlSec).then((granted) => {
      if (this.id !== null) {
        // Another grant answered first: this lease holds no key.
        void this.store.revoke(granted.id).catch(() => undefined);
        return this.id;
      }
      this.onGranted(this.ttlSec, granted.ttlSec);
      this.id = granted.id;
      this.last = granted;
      this.schedule();
      return granted.id;
    });
    this.granting = granting;
    const done = () => {
      if (this.granting === granting) this.granting = null;
    };
    granting.then(done, done);
    return granting;
  }

  /** Whether `id` is the lease this process keeps alive now. */
  isCurrent(id: string): boolean {
    return this.id === id;
  }

  hold(key: string): void {
    this.holders.add(key);
    this.schedule();
  }

  /**
   * No key of this process is on the lease any more: stop keeping it alive and forget it (it
   * lapses on the server by itself), so the next candidacy gets a fresh one.
   */
  unhold(key: string): void {
    if (!this.holders.delete(key) || this.holders.size > 0) return;
    this.reset();
  }

  /** Forgets the lease (no keep-alive any more); the next `ensure` grants a new one. */
  reset(): void {
    this.stopTimer();
    this.id = null;
    this.last = null;
    this.holders.clear();
  }

  /**
   * A keep-alive answered with the lease alive, sent no earlier than `since - REUSE_MS`, or one in
   * flight sent within the last third of the TTL (an older one may be stuck on a member that went
   * away: a new one goes to another). Rejects with `LEASE_LOST` when the lease is gone.
   */
  async fresh(since: number): Promise<LiveLease> {
    const id = this.id;
    if (id === null) throw new ConclaveError('LEASE_LOST', 'the etcd lease is gone', { backend: KIND });
    if (this.inFlight && performance.now() - this.inFlight.sentAt < (this.ttlSec * 1000) / 3) return this.inFlight.promise;
    const last = this.last;
    if (last && last.ttlSec > 0 && last.sentAt >= since - REUSE_MS) return this.live(id, last);
    return this.keepAlive(id);
  }

  /**
   * The last keep-alive answered, when it leaves at least half the TTL from `since`; else `fresh`.
   * A campaign that wins counts on it without waiting for one of its own: the lease it grants is
   * shorter (counted from that keep-alive's send), and the core renews sooner.
   */
  lasting(since: number): Promise<LiveLease> {
    const id = this.id;
    const last = this.last;
    if (id !== null && last && last.ttlSec > 0) {
      const live = this.live(id, last);
      if (live.sentAt + live.ttlMs / 2 >= since) return Promise.resolve(live);
    }
    return this.fresh(since);
  }

  private live(id: string, proof: LeaseProof): LiveLease {
    return { id, sentAt: proof.sentAt, ttlMs: Math.min(this.ttlSec, proof.ttlSec) * 1000 };
  }

  private keepAlive(id: string): Promise<LiveLease> {
    const sentAt = performance.now();
    // Unanswered for a third of the TTL, the stream is stuck: a new one leaves time for a retry.
    const stallMs = Math.max(STALL_MIN_MS, Math.floor((this.ttlSec * 1000) / 3));
    const promise = this.keepAlives.keepAlive(id, stallMs).then((ttlSec) => {
      const proof: LeaseProof = { sentAt, ttlSec };
      if (this.id !== id) throw new ConclaveError('LEASE_LOST', 'the etcd lease was replaced', { backend: KIND });
      if (proof.ttlSec <= 0) {
        this.lost(id);
        throw new ConclaveError('LEASE_LOST', 'the etcd lease expired on the server', { backend: KIND });
      }
      // A slow answer never replaces a later one's proof.
      if (!this.last || proof.sentAt > this.last.sentAt) this.last = proof;
      return this.live(id, proof);
    });
    const entry = { sentAt, promise };
    this.inFlight = entry;
    const clear = () => {
      if (this.inFlight === entry) this.inFlight = null;
    };
    promise.then(clear, clear);
    return promise;
  }

  /** The lease is gone on the server: every key on it went with it. */
  private lost(id: string): void {
    if (this.id !== id) return;
    this.id = null;
    this.last = null;
    this.holders.clear();
    this.stopTimer();
    this.onLost();
  }

  /**
   * Arms the background keep-alive: half the TTL after the last one sent, or soon after a failure.
   * A leader renews sooner than that (the core renews at half the usable grant at the latest), so
   * its renewals leave the background nothing to send.
   */
  private schedule(delayMs?: number): void {
    if (this.timer || this.closed || this.id === null || this.holders.size === 0) return;
    const period = Math.floor((this.ttlSec * 1000) / 2);
    const last = this.last;
    const wait = delayMs ?? (last ? Math.max(0, last.sentAt + period - performance.now()) : period);
    this.timer = setTimeout(() => {
      this.timer = null;
      const id = this.id;
      if (id === null || this.holders.size === 0) return;
      const latest = this.last;
      if (this.inFlight || (latest && performance.now() - latest.sentAt < period - 5)) {
        this.schedule(this.inFlight ? RETRY_MS : undefined); // a renewal keeps it alive
        return;
      }
      // Renewals report their own failures; a failed background one is tried again soon.
      this.keepAlive(id).then(
        () => this.schedule(),
        () => this.schedule(RETRY_MS),
      );
    }, wait);
    this.timer.unref?.();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Stops keeping the lease alive; with `revoke`, revokes it (its keys go at once). */
  async close(revoke: boolean): Promise<void> {
    this.closed = true;
    this.stopTimer();
    const id = this.id;
    this.id = null;
    if (revoke && id !== null) await this.store.revoke(id).catch(() => undefined);
  }
}

/**
 * The lease granted to the core for a call started at `start`: the key lives at least until the
 * keep-alive's `sentAt + ttlMs`, and no earlier keep-alive than `start` can be counted on past that.
 * Rounded down to a whole `REUSE_MS` below: the renewals of one turn, which count on keep-alives
 * sent up to `REUSE_MS` apart, get one grant, and so one renew interval (the core renews at half
 * the usable lease when that is sooner than `renewMs`, on a grid per interval: grants a few ms
 * apart would split one batch of renewals into many).
 */
export function grantedFrom(start: number, live: { sentAt: number; ttlMs: number }): number {
  // The offset first: `start + ttlMs - start` can round up past a whole REUSE_MS when
  // `start + ttlMs` crosses a power of two.
  const exact = Math.min(live.sentAt, start) - start + live.ttlMs;
  return Math.max(0, Math.ceil(exact / REUSE_MS - 1) * REUSE_MS);
}
