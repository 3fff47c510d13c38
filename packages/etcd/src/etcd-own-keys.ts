import type { ICompare, IRequestOp } from 'etcd3';
import { TickBatcher } from '@conclave/core/internal';
import { cmp, op, type EtcdStore } from './etcd-store';
import { rangeOf } from './etcd-reads';

/** What a renewal checks: that its candidate key is still the one created at `revision`. */
export interface OwnKey {
  revision: number;
  /** The key's create revision is `revision` (made once per candidacy, as `read`). */
  compare: ICompare;
  /** The key's revisions and lease, without its value. */
  read: IRequestOp;
}

export function ownKey(key: string, revision: number): OwnKey {
  return { revision, compare: cmp.createIs(key, revision), read: op.revisions(key) };
}

/**
 * The checks of one event-loop turn's renewals, as one read-only transaction of compares (up to
 * `maxOps`, etcd's `--max-txn-ops`): a leader of thousands renews thousands of times a second,
 * and an answer of compares only carries no key to decode. When it fails (a key of the batch was
 * deleted or replaced: rare, a `forceLeader` or a lease gone), a second transaction reads the
 * batch's keys to tell which.
 *
 * The create revision is enough: every put to a candidate key keeps its lease (its campaigns, a
 * hand-over, `forceLeader`), so a key created at `revision` is still on the lease it was created on.
 */
export class OwnKeyChecks {
  private readonly batches: TickBatcher<OwnKey, boolean>;

  constructor(store: EtcdStore, maxOps: number) {
    this.batches = new TickBatcher(async (keys) => {
      const all = await store.txn(keys.map((k) => k.compare), [], [], 'renew');
      if (all.succeeded) return keys.map(() => true);
      const read = await store.txn([], keys.map((k) => k.read), [], 'renew');
      return keys.map((k, i) => Number(rangeOf(read, i)?.kvs[0]?.create_revision) === k.revision);
    }, maxOps);
  }

  /** Whether the key is still the one created at `key.revision`. */
  check(key: OwnKey): Promise<boolean> {
    return this.batches.submit(key);
  }
}
