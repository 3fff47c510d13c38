import type { ICompare, IRequestOp } from 'etcd3';
import { TickBatcher } from '@conclave/core/spi';
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
 * The checks of one event-loop turn's renewals, as one transaction: a leader of thousands renews
 * thousands of times a second, and an answer of compares only carries no key to decode.
 * - Up to `maxOps` checks (etcd's `--max-txn-ops`), a transaction of compares and one read of
 *   the first key: read-only, no Raft proposal. The read is what makes it linearizable: etcd
 *   answers a transaction with no read from the member's own copy, as a serializable read, and a
 *   member cut off from the others (before it notices) or behind them would tell a leader whose
 *   key was deleted (`forceLeader`, `clearLeader`) that the key is still there.
 * - Beyond, the compares go in groups of `maxOps / 2`, each a nested transaction (etcd 3.3 and
 *   later; etcd gives a nested transaction what its parent leaves of `--max-txn-ops`), up to
 *   `(maxOps / 2)²` checks in one request (4 096 at the default). etcd 3.4 counts a transaction
 *   with nested ones as a write: one Raft proposal per turn, instead of a read-only request per
 *   `maxOps` checks, which leave as several bursts and cost a gRPC call each.
 * - When a group fails (a key of it was deleted or replaced: rare, a `forceLeader` or a lease
 *   gone), a second transaction reads that group's keys to tell which.
 *
 * The create revision is enough: every put to a candidate key keeps its lease (its campaigns, a
 * hand-over, `forceLeader`), so a key created at `revision` is still on the lease it was created on.
 */
export class OwnKeyChecks {
  private readonly batches: TickBatcher<OwnKey, boolean>;

  constructor(store: EtcdStore, maxOps: number) {
    const group = Math.max(1, Math.floor(maxOps / 2));
    this.batches = new TickBatcher(async (keys) => {
      const flat = keys.length <= maxOps;
      const size = flat ? Math.max(1, keys.length) : group;
      const groups: OwnKey[][] = [];
      for (let i = 0; i < keys.length; i += size) groups.push(keys.slice(i, i + size));
      const all = flat
        ? await store.txn(keys.map((k) => k.compare), [keys[0]!.read], [], 'renew')
        : await store.txn([], groups.map((g) => op.txn(g.map((k) => k.compare))), [], 'renew');
      const held = await Promise.all(
        groups.map(async (g, i) => {
          if (flat ? all.succeeded : all.responses[i]?.response_txn?.succeeded === true) return g.map(() => true);
          const read = await store.txn([], g.map((k) => k.read), [], 'renew');
          return g.map((k, n) => Number(rangeOf(read, n)?.kvs[0]?.create_revision) === k.revision);
        }),
      );
      return held.flat();
    }, group * group);
  }

  /** Whether the key is still the one created at `key.revision`. */
  check(key: OwnKey): Promise<boolean> {
    return this.batches.submit(key);
  }
}
