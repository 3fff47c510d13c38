import { type ElectionKeys, type EtcdStore, cmp, decodeCandidate, encodeCandidate, op } from './etcd-store';
import { floorOffset, rangeOf } from './etcd-reads';

/**
 * Ends the term of the key `key` (created at `revision`), which heads its election's queue, and
 * starts its successor's term in the same transaction: the successor's key gets its token offset
 * written, as its own campaign would write it (and as `forceLeader` does), so the successor's
 * campaign, woken by the deletion, finds its term started and only reads. A graceful hand-over
 * then costs one write, not two. Without a successor (or when one changed meanwhile, or its lease
 * is gone) the key is only deleted.
 *
 * Resolves with whether the key was deleted; false when it had been replaced (another term).
 */
export async function releaseHandingOver(store: EtcdStore, keys: ElectionKeys, election: string, key: string, revision: number): Promise<boolean> {
  const fenceKey = keys.fence(election);
  const floorKey = keys.floor(election);
  const read = await store.txn([], [op.queue(keys.candidates(election), 2), op.get(floorKey), op.get(fenceKey)], [], 'release', election);
  const [first, next] = rangeOf(read, 0)?.kvs ?? [];
  const floor = rangeOf(read, 1)?.kvs[0];
  const fence = rangeOf(read, 2)?.kvs[0];
  const heads = first?.key.toString() === key && Number(first.create_revision) === revision && !fence;
  const successor = heads && next ? decodeCandidate(next) : null;
  // A key without a lease (none of ours) would never go: only a candidate's key is handed over.
  if (next && successor && successor.o === undefined && String(next.lease) !== '0') {
    const res = await store
      .txn(
        [cmp.createIs(key, revision), cmp.modIs(next.key.toString(), next.mod_revision), cmp.modIs(floorKey, floor?.mod_revision ?? 0), cmp.createIs(fenceKey, 0)],
        [op.del(key), op.put(next.key.toString(), encodeCandidate({ ...successor, o: floorOffset(floor) }), String(next.lease))],
        [],
        'release',
        election,
      )
      // The successor's lease ended meanwhile: etcd refuses the whole transaction.
      .catch((err: unknown) => (/lease not found/i.test(String((err as { message?: unknown }).message)) ? null : Promise.reject(err)));
    if (res?.succeeded) return true;
  }
  const res = await store.txn([cmp.createIs(key, revision)], [op.del(key)], [], 'release', election);
  return res.succeeded;
}
