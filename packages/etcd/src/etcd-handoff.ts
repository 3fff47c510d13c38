import type { IKeyValue, IRequestOp, ITxnResponse } from 'etcd3';
import { type ElectionKeys, type EtcdStore, cmp, decodeCandidate, encodeCandidate, op } from './etcd-store';
import { floorOffset, rangeOf } from './etcd-reads';

/**
 * What a leader read when its term started: the key after its own in the queue (none if it was
 * alone) and the token floor. Keys only join a queue at its tail, so while that key is unchanged
 * it is still the successor; a release checks it with compares rather than a read.
 */
export interface HandoverHint {
  next: IKeyValue | undefined;
  floor: IKeyValue | undefined;
}

/** What a release sends its transactions through: the store, or the backend's batches of releases. */
export type TxnSender = Pick<EtcdStore, 'txn'>;

/** The term a release ends: its key, created at `revision`, and its election's floor and fence keys. */
interface EndingTerm {
  election: string;
  key: string;
  revision: number;
  floorKey: string;
  fenceKey: string;
}

/**
 * Ends the term of the key `key` (created at `revision`), which heads its election's queue, and
 * starts its successor's term in the same transaction: the successor's key gets its token offset
 * written, as its own campaign would write it (and as `forceLeader` does), so the successor's
 * campaign, woken by the deletion, finds its term started and only reads. A graceful hand-over
 * then costs one write, not two. Without a successor (or when one changed meanwhile, or its lease
 * is gone) the key is only deleted.
 *
 * With a `hint` that still holds, that is one round trip: the transaction's compares check the
 * hint, and when they fail it reads the queue instead, for a second try.
 *
 * Resolves with whether the key was deleted; false when it had been replaced (another term).
 */
export async function releaseHandingOver(
  store: TxnSender,
  keys: ElectionKeys,
  election: string,
  key: string,
  revision: number,
  hint?: HandoverHint,
): Promise<boolean> {
  const term: EndingTerm = { election, key, revision, floorKey: keys.floor(election), fenceKey: keys.fence(election) };
  const candidates = keys.candidates(election);
  const reads = [op.queue(candidates, 2), op.get(term.floorKey), op.get(term.fenceKey)];
  let read: ITxnResponse | null = null;
  if (hint) {
    const tried = await (hint.next
      ? handOver(store, term, hint.next, hint.floor, reads)
      : store.txn([cmp.createIs(key, revision), cmp.noneCreatedAfter(candidates, revision)], [op.del(key)], reads, 'release', election));
    if (tried?.succeeded) return true;
    read = tried;
  }
  read ??= await store.txn([], reads, [], 'release', election);
  const [first, next] = rangeOf(read, 0)?.kvs ?? [];
  const floor = rangeOf(read, 1)?.kvs[0];
  const fence = rangeOf(read, 2)?.kvs[0];
  const heads = first?.key.toString() === key && Number(first.create_revision) === revision && !fence;
  if (heads && next && (await handOver(store, term, next, floor, []))?.succeeded) return true;
  const res = await store.txn([cmp.createIs(key, revision)], [op.del(key)], [], 'release', election);
  return res.succeeded;
}

/**
 * Deletes `key` and writes `next`'s token offset, if `next` and the floor are as read and no
 * fence stands; else runs `failure`. Null when there is nothing to hand over to (`next` is no
 * candidate's key, or its term started) or when etcd refused it (its lease ended meanwhile).
 */
async function handOver(store: TxnSender, term: EndingTerm, next: IKeyValue, floor: IKeyValue | undefined, failure: IRequestOp[]): Promise<ITxnResponse | null> {
  const { election, key, revision, floorKey, fenceKey } = term;
  const successor = decodeCandidate(next);
  // A key without a lease (none of ours) would never go: only a candidate's key is handed over.
  if (!successor || successor.o !== undefined || String(next.lease) === '0') return null;
  return store
    .txn(
      [cmp.createIs(key, revision), cmp.modIs(next.key.toString(), next.mod_revision), cmp.modIs(floorKey, floor?.mod_revision ?? 0), cmp.createIs(fenceKey, 0)],
      [op.del(key), op.put(next.key.toString(), encodeCandidate({ ...successor, o: floorOffset(floor) }), String(next.lease))],
      failure,
      'release',
      election,
    )
    .catch((err: unknown) => (/lease not found/i.test(String((err as { message?: unknown }).message)) ? null : Promise.reject(err)));
}

