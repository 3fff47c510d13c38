import type { IKeyValue, IRangeResponse, IRequestOp, ITxnResponse } from 'etcd3';
import { candidateOf, type LeaderInfo } from '@conclave/core/spi';
import { type ElectionKeys, type EtcdStore, decodeCandidate, op, type CandidateValue } from './etcd-store';

/** One candidate key as read. */
export interface Candidate {
  key: string;
  kv: IKeyValue;
  value: CandidateValue;
  revision: number;
}

/** An election's reads: its head (lowest create revision) with its fence, and its queue of candidates. */
export class ElectionReads {
  constructor(
    private readonly store: EtcdStore,
    private readonly keys: ElectionKeys,
  ) {}

  /** The head candidate key and the fence, in one transaction (one revision). */
  async head(election: string): Promise<{ head: IKeyValue | undefined; fence: IKeyValue | undefined }> {
    const res = await this.store.txn([], [op.head(this.keys.candidates(election)), op.get(this.keys.fence(election))], [], 'read', election);
    return { head: rangeOf(res, 0)?.kvs[0], fence: rangeOf(res, 1)?.kvs[0] };
  }

  /** Every candidate key, lowest create revision first. */
  async candidates(election: string): Promise<Candidate[]> {
    const res = await this.store.range(this.keys.candidates(election), { prefix: true, sortByCreate: true }, election);
    const out: Candidate[] = [];
    for (const kv of res.kvs) {
      const value = decodeCandidate(kv);
      if (value) out.push({ key: kv.key.toString(), kv, value, revision: Number(kv.create_revision) });
    }
    return out;
  }

  /** The candidate id of the leader, null when nobody leads. */
  async leaderId(election: string): Promise<string | null> {
    const { head, fence } = await this.head(election);
    return infoOf(head, fence)?.candidateId ?? null;
  }
}

/** The leader as `head` and `fence` show it: none while a fence stands or before the head's term started. */
export function infoOf(head: IKeyValue | undefined, fence: IKeyValue | undefined): LeaderInfo | null {
  if (!head || fence) return null;
  const value = decodeCandidate(head);
  if (value?.o === undefined) return null; // its term has not started
  return { candidateId: candidateOf(value.id), token: value.o + Number(head.create_revision), ...(value.v !== undefined ? { value: value.v } : {}) };
}

/** A follower's view of `infoOf`. */
export function leaderOf(head: IKeyValue | undefined, fence: IKeyValue | undefined): { leaderId: string | null; token: number | null } {
  const info = infoOf(head, fence);
  return { leaderId: info ? info.candidateId : null, token: info ? info.token : null };
}

/** The range answer of a transaction's `index`-th operation. */
export function rangeOf(res: ITxnResponse, index: number): IRangeResponse | undefined {
  return res.responses[index]?.response_range ?? undefined;
}

/**
 * What a term's start writes beside its token offset: the token floor, `0`, when the election has
 * none yet (an offset of 0 all the same). Persistent, so the election keeps a key once its
 * candidates are gone (`electionExists`). Written once: the start's compare on the floor's
 * revision already requires it absent.
 */
export function floorMark(floorKey: string, floor: IKeyValue | undefined): IRequestOp[] {
  return floor === undefined ? [op.put(floorKey, Buffer.from('0'))] : [];
}

/** The token floor's offset stored in `floor` (0 when none). */
export function floorOffset(floor: IKeyValue | undefined): number {
  if (!floor) return 0;
  const n = Number(floor.value.toString('utf8'));
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
