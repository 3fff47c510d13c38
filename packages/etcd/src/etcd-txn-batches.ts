import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import type { ICompare, IRequestOp, IResponseOp, ITxnResponse } from 'etcd3/lib/rpc';
import { etcd3 } from './etcd-driver';
import { callFailed, op, type EtcdStore } from './etcd-store';

/** One election's transaction, as `EtcdStore.txn` takes it. */
interface Txn {
  election: string;
  compare: ICompare[];
  success: IRequestOp[];
  failure: IRequestOp[];
  resolve: (res: ITxnResponse) => void;
  reject: (err: unknown) => void;
}

/** Transactions sent together, how many operations the batch's own list holds, and the largest nested one. */
interface Batch {
  txns: Txn[];
  elections: Set<string>;
  ops: number;
  nested: number;
}

/** Longest a batch waits for the batches in flight, ms (see `schedule`). */
const HOLD_MS = 25;

/** Errors of etcd refusing what a request asks (not a lost connection): one transaction can cause them for all. */
function refusals(): Array<new (...args: never[]) => Error> {
  const m = etcd3();
  // Permission denied: the user's roles may cover the keys of some elections of the batch only.
  return [m.EtcdLeaseInvalidError, m.EtcdPermissionDeniedError, m.GRPCInvalidArgumentError, m.GRPCFailedPreconditionError, m.GRPCOutOfRangeError, m.GRPCResourceExhastedError];
}

/**
 * Transactions of different elections made in one event-loop turn, sent as one: a process that
 * campaigns in thousands of elections at once (all its Electors started together, or the
 * successors of a process that led them all) makes one round trip, and etcd one Raft proposal,
 * per batch instead of one per election.
 *
 * - A transaction without compares adds its operations to the batch's own; one with compares is
 *   nested in it (a `request_txn`, etcd 3.3 and later). A batch holds at most `maxOps`
 *   operations of its own, etcd's `--max-txn-ops`.
 * - A batch holds at most one transaction per election. Keys put by one transaction share its
 *   revision, and a candidate key's create revision is its token: two candidates of one election
 *   created in one batch would tie. (etcd also refuses a transaction that writes a key twice.)
 * - When etcd refuses a batch for what it asks (a lease that lapsed under one of its keys), each
 *   of its transactions is sent again alone, so that each gets its own answer.
 */
export class TxnBatches {
  private pending: Txn[] = [];
  private scheduled = false;
  /** Batches sent and not answered yet. */
  private inFlight = 0;
  /** When the last batches were sent, performance.now() ms. */
  private sentAt = -Infinity;
  private holdTimer: NodeJS.Timeout | null = null;

  constructor(
    /** Sends the batches (its request timeout bounds each). */
    private readonly store: EtcdStore,
    private readonly maxOps: number,
    /** What the transactions are, for errors. */
    private readonly what: string,
  ) {}

  /**
   * `store.txn` of one election's transaction, sent with the others of this turn (and, while a
   * batch is in flight, of the next turns: see `schedule`). `caller` bounds the wait (its
   * `within` deadline); a caller that gives up leaves the batch to go on.
   */
  txn(caller: EtcdStore, election: string, compare: ICompare[], success: IRequestOp[], failure: IRequestOp[]): Promise<ITxnResponse> {
    const answer = new Promise<ITxnResponse>((resolve, reject) => {
      this.pending.push({ election, compare, success, failure, resolve, reject });
      this.schedule();
    });
    return caller.bounded(answer, this.what, election);
  }

  /**
   * At the end of this turn when no batch is in flight; else once they are answered, or
   * `HOLD_MS` after they were sent, whichever comes first. Under load the transactions of
   * several turns go together: etcd 3.4 copies its buffer of writes not yet committed for every
   * read transaction, megabytes while thousands of keys change, so their number matters more
   * than their size. Never held longer than `HOLD_MS` behind a batch that hangs (a member gone).
   */
  private schedule(): void {
    if (this.scheduled || this.pending.length === 0) return;
    if (this.inFlight === 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    } else if (!this.holdTimer) {
      this.holdTimer = setTimeout(() => {
        this.holdTimer = null;
        this.flush();
      }, Math.max(0, this.sentAt + HOLD_MS - performance.now()));
    }
  }

  private flush(): void {
    this.scheduled = false;
    this.stopHold();
    const txns = this.pending;
    this.pending = [];
    if (txns.length === 0) return;
    this.sentAt = performance.now();
    for (const batch of this.group(txns)) {
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        if (this.inFlight === 0 && !this.scheduled) {
          this.stopHold();
          this.schedule();
        }
      });
    }
  }

  private stopHold(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
  }

  /**
   * Each transaction in the first batch with room and without its election. etcd gives a nested
   * transaction what its parent leaves of `--max-txn-ops`: a batch's own operations plus its
   * largest nested transaction's stay within it.
   */
  private group(txns: Txn[]): Batch[] {
    const batches: Batch[] = [];
    for (const txn of txns) {
      const flat = txn.compare.length === 0;
      const ops = flat ? txn.success.length : 1;
      const nested = flat ? 0 : Math.max(txn.compare.length, txn.success.length, txn.failure.length);
      const fits = (b: Batch) => b.ops + ops + Math.max(b.nested, nested) <= this.maxOps && !b.elections.has(txn.election);
      let batch = batches.find(fits);
      if (!batch) batches.push((batch = { txns: [], elections: new Set(), ops: 0, nested: 0 }));
      batch.txns.push(txn);
      batch.elections.add(txn.election);
      batch.ops += ops;
      batch.nested = Math.max(batch.nested, nested);
    }
    return batches;
  }

  private async send({ txns }: Batch): Promise<void> {
    if (txns.length === 1) return this.sendAlone(txns[0]!);
    const ops = txns.flatMap((t): IRequestOp[] => (t.compare.length === 0 ? t.success : [op.txn(t.compare, t.success, t.failure)]));
    let res: ITxnResponse;
    try {
      res = await this.store.txn([], ops, [], this.what);
    } catch (err) {
      if (isRefusal(err)) {
        await Promise.all(txns.map((t) => this.sendAlone(t)));
      } else {
        for (const t of txns) t.reject(forElection(err, t.election, this.what));
      }
      return;
    }
    let at = 0;
    for (const t of txns) {
      if (t.compare.length === 0) {
        t.resolve(answerOf(res, true, res.responses.slice(at, at + t.success.length)));
        at += t.success.length;
      } else {
        const nested = (res.responses[at] as IResponseOp | undefined)?.response_txn;
        at += 1;
        if (nested) t.resolve(answerOf(res, nested.succeeded, nested.responses));
        else t.reject(new ConclaveError('BACKEND_ERROR', `etcd answered a batch of ${this.what}s without a nested answer`, { backend: 'etcd', election: t.election }));
      }
    }
  }

  private async sendAlone(t: Txn): Promise<void> {
    await this.store.txn(t.compare, t.success, t.failure, this.what, t.election).then(t.resolve, t.reject);
  }
}

/** One transaction's answer within a batch: the batch's header (its revision), its own outcome. */
function answerOf(batch: ITxnResponse, succeeded: boolean, responses: IResponseOp[]): ITxnResponse {
  return { header: batch.header, succeeded, responses };
}

function isRefusal(err: unknown): boolean {
  const cause = err instanceof ConclaveError ? err.cause : err;
  return refusals().some((kind) => cause instanceof kind);
}

/** A batch's error, as the transaction of `election` would have had it alone. */
function forElection(err: unknown, election: string, what: string): unknown {
  if (!(err instanceof ConclaveError) || err.election !== undefined || err.cause === undefined) return err;
  return callFailed(what, err.cause, election);
}
