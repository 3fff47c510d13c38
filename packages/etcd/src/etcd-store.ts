import { ConclaveError } from '@conclave/core';
import { withTimeout } from '@conclave/core/spi';
import type { CallOptions } from '@grpc/grpc-js';
import type { IKeyValue, IRangeResponse, IRequestOp, ICompare, ITxnResponse, ILeaseKeepAliveResponse, KVClient, LeaseClient } from 'etcd3/lib/rpc';
import { etcdErrorCode } from './etcd-errors';
import { requireLeader } from './etcd-require-leader';

const KIND = 'etcd';

/** Key layout of one election, under the backend's prefix. */
export class ElectionKeys {
  constructor(
    /** Every key of every election of the backend starts with it. */
    readonly prefix: string,
  ) {}
  /** Every key of the election ends with this prefix's range. */
  root(election: string): string {
    return `${this.prefix}${election}/`;
  }
  /** Candidate keys: one per instance, attached to its backend's lease. */
  candidates(election: string): string {
    return `${this.root(election)}c/`;
  }
  candidate(election: string, instanceId: string): string {
    return `${this.candidates(election)}${instanceId}`;
  }
  /** Left by an admin that revoked a term; attached to a lease of its own that outlives the revoked one. */
  fence(election: string): string {
    return `${this.root(election)}fence`;
  }
  /** Persistent: the token offset (see `raiseTokenFloor`). */
  floor(election: string): string {
    return `${this.root(election)}floor`;
  }
}

/** What a candidate key holds (JSON). `o` is the token offset, written when its term starts. */
export interface CandidateValue {
  /** Instance id (the key's last segment, repeated for readability). */
  id: string;
  /** Published value. */
  v?: string;
  /** Token offset this term started with; absent until the candidate first led. */
  o?: number;
}

export function encodeCandidate(value: CandidateValue): Buffer {
  return Buffer.from(JSON.stringify(value));
}

export function decodeCandidate(kv: IKeyValue): CandidateValue | null {
  try {
    const parsed = JSON.parse(kv.value.toString('utf8')) as Partial<CandidateValue>;
    if (typeof parsed.id !== 'string') return null;
    return parsed as CandidateValue;
  } catch {
    return null;
  }
}

/** The exclusive end of the range of keys that start with `prefix`. */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** A keep-alive (or grant) the server answered. */
export interface LeaseProof {
  /** When the request was sent, performance.now() ms. */
  sentAt: number;
  /** TTL the server answered, s (≤ 0: the lease is gone). */
  ttlSec: number;
}

/**
 * The raw gRPC calls the backend makes, each bounded by the request timeout (a gRPC deadline) and
 * refused by a member without a Raft leader (`requireLeader`), their errors turned into
 * `ConclaveError`.
 */
export class EtcdStore {
  constructor(
    private readonly kv: KVClient,
    private readonly lease: LeaseClient,
    private readonly timeoutMs: number,
    /** When the caller gives up (performance.now() ms): no call of this store outlives it. */
    private readonly untilMs?: number,
  ) {}

  /**
   * This store, its calls ending by `untilMs` too (a request's `deadlineMs`). A call in flight
   * when the Raft leader goes away waits for its deadline; ending it when the core gives up frees
   * the candidate's turn for the next call (see CandidateTurns).
   */
  within(untilMs: number | undefined): EtcdStore {
    return untilMs === undefined ? this : new EtcdStore(this.kv, this.lease, this.timeoutMs, untilMs);
  }

  /** How long a call started now may take, ms. */
  private budgetMs(): number {
    return this.untilMs === undefined ? this.timeoutMs : Math.max(1, Math.min(this.timeoutMs, this.untilMs - performance.now()));
  }

  private options(): CallOptions {
    return { ...requireLeader(), deadline: new Date(Date.now() + this.budgetMs()) };
  }

  /** `promise`, or BACKEND_UNAVAILABLE once this store's budget runs out first (it goes on unwatched). */
  bounded<T>(promise: Promise<T>, what: string, election?: string): Promise<T> {
    if (this.untilMs === undefined) return promise;
    return withTimeout(promise, this.budgetMs(), () => new ConclaveError('BACKEND_UNAVAILABLE', `etcd ${what} got no answer before the caller gave up`, { backend: KIND, election }));
  }

  async range(key: string | Buffer, opts: { prefix?: boolean; limit?: number; sortByCreate?: boolean; keysOnly?: boolean } = {}, election?: string): Promise<IRangeResponse> {
    const k = Buffer.from(key);
    return this.call('range', election, () =>
      this.kv.range(
        {
          key: k,
          ...(opts.prefix ? { range_end: prefixEnd(k.toString()) } : {}),
          ...(opts.limit ? { limit: opts.limit } : {}),
          ...(opts.sortByCreate ? { sort_order: 'Ascend' as const, sort_target: 'Create' as const } : {}),
          ...(opts.keysOnly ? { keys_only: true } : {}),
        },
        this.options(),
      ),
    );
  }

  txn(compare: ICompare[], success: IRequestOp[], failure: IRequestOp[], what: string, election?: string): Promise<ITxnResponse> {
    return this.call(what, election, () => this.kv.txn({ compare, success, failure }, this.options()));
  }

  async grant(ttlSec: number): Promise<{ id: string } & LeaseProof> {
    const sentAt = performance.now();
    const res = await this.call('lease grant', undefined, () => this.lease.leaseGrant({ TTL: ttlSec }, this.options()));
    if (res.error) throw new ConclaveError('BACKEND_ERROR', `lease grant refused: ${res.error}`, { backend: KIND });
    return { id: String(res.ID), sentAt, ttlSec: Number(res.TTL) };
  }

  async timeToLive(id: string): Promise<{ ttlSec: number; grantedSec: number }> {
    const res = await this.call('lease time-to-live', undefined, () => this.lease.leaseTimeToLive({ ID: id }, this.options()));
    return { ttlSec: Number(res.TTL), grantedSec: Number(res.grantedTTL) };
  }

  async revoke(id: string): Promise<void> {
    await this.call('lease revoke', undefined, () => this.lease.leaseRevoke({ ID: id }, this.options())).catch((err: unknown) => {
      if (err instanceof ConclaveError && /not found/i.test(String((err.cause as Error | undefined)?.message))) return;
      throw err;
    });
  }

  /** One keep-alive of lease `id` on a stream of its own, ended after the answer. */
  async keepAlive(id: string): Promise<LeaseProof> {
    const sentAt = performance.now();
    const stream = await this.call('lease keep-alive', undefined, () => this.lease.leaseKeepAlive(this.options()));
    const res = await new Promise<ILeaseKeepAliveResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new ConclaveError('BACKEND_UNAVAILABLE', `lease keep-alive got no answer within ${this.timeoutMs} ms`, { backend: KIND }));
      }, this.timeoutMs);
      stream.on('data', (r: ILeaseKeepAliveResponse) => {
        clearTimeout(timer);
        resolve(r);
      });
      stream.on('error', (err: unknown) => {
        clearTimeout(timer);
        reject(callFailed('lease keep-alive', err));
      });
      stream.on('end', () => {
        clearTimeout(timer);
        reject(new ConclaveError('BACKEND_UNAVAILABLE', 'lease keep-alive stream ended without an answer', { backend: KIND }));
      });
      stream.write({ ID: id });
    }).finally(() => {
      try {
        stream.end();
      } catch {
        // already closed
      }
    });
    return { sentAt, ttlSec: Number(res.TTL) };
  }

  private async call<T>(what: string, election: string | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw callFailed(what, err, election);
    }
  }
}

/**
 * `err` of a call as a ConclaveError (unless it is one already): `BACKEND_AUTH` or
 * `BACKEND_MISCONFIGURED` when etcd refused it for good (see `etcdErrorCode`), else
 * `BACKEND_UNAVAILABLE`.
 */
export function callFailed(what: string, err: unknown, election?: string): ConclaveError {
  if (err instanceof ConclaveError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ConclaveError(etcdErrorCode(err), `etcd ${what} failed: ${message}`, { backend: KIND, election, cause: err });
}

/** Helpers that build request ops. */
export const op = {
  put(key: string, value: Buffer, lease?: string): IRequestOp {
    return { request_put: { key: Buffer.from(key), value, ...(lease !== undefined ? { lease } : {}) } };
  },
  get(key: string): IRequestOp {
    return { request_range: { key: Buffer.from(key) } };
  },
  /** The key's revisions and lease, without its value. */
  revisions(key: string): IRequestOp {
    return { request_range: { key: Buffer.from(key), keys_only: true } };
  },
  head(prefix: string): IRequestOp {
    return op.queue(prefix, 1);
  },
  /** The first `limit` keys under `prefix`, lowest create revision first. */
  queue(prefix: string, limit: number): IRequestOp {
    return { request_range: { key: Buffer.from(prefix), range_end: prefixEnd(prefix), limit, sort_order: 'Ascend', sort_target: 'Create' } };
  },
  /** The keys (no values) under `prefix`, lowest create revision first. */
  keys(prefix: string): IRequestOp {
    return { request_range: { key: Buffer.from(prefix), range_end: prefixEnd(prefix), sort_order: 'Ascend', sort_target: 'Create', keys_only: true } };
  },
  del(key: string): IRequestOp {
    return { request_delete_range: { key: Buffer.from(key) } };
  },
  /** A nested transaction (etcd 3.3 and later); of compares only, its answer says whether they all held. */
  txn(compare: ICompare[], success: IRequestOp[] = [], failure: IRequestOp[] = []): IRequestOp {
    return { request_txn: { compare, success, failure } };
  },
};

export const cmp = {
  createIs(key: string, revision: number | string): ICompare {
    return { key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: String(revision) };
  },
  /** True while no key under `prefix` was created after `revision` (a compare over the whole range). */
  noneCreatedAfter(prefix: string, revision: number): ICompare {
    return { key: Buffer.from(prefix), range_end: prefixEnd(prefix), target: 'Create', result: 'Less', create_revision: String(revision + 1) };
  },
  /** True while no key under `prefix` was created before `revision`: a key created at `revision` heads the queue. */
  noneCreatedBefore(prefix: string, revision: number): ICompare {
    return { key: Buffer.from(prefix), range_end: prefixEnd(prefix), target: 'Create', result: 'Greater', create_revision: String(revision - 1) };
  },
  modIs(key: string, revision: number | string): ICompare {
    return { key: Buffer.from(key), target: 'Mod', result: 'Equal', mod_revision: String(revision) };
  },
};
