import { assertCandidateId, type ElectionBackend, type LeaderInfo, type LeaderMetadataKept } from '@conclave/core/spi';
import { KIND, throwFirstFailure, validate } from './side-requests';

/**
 * The calls an operator or an observer makes in `dual` (reading, forcing and clearing the
 * leader), made on both sides so that the answer holds whichever fleet mix is running. Force,
 * clear and existence only when both sides have an `admin` part (see `adminOf`).
 */
export class DualAdmin {
  /** `kept`: the leader metadata fields both sides keep (the pair's `leaderMetadata`). */
  constructor(
    private readonly from: ElectionBackend,
    private readonly to: ElectionBackend,
    private readonly kept: () => LeaderMetadataKept,
  ) {}

  /**
   * In `dual`, the leader that acts: whoever holds `to` (a dual leader, holding both, or a
   * to-only one beside dual nodes), with the token its Elector holds; else `from`'s (an old node
   * beside dual ones). Both sides are read, and either failing fails the answer: one side alone
   * cannot tell which fleet mix is running. The leader metadata is that side's, limited to the
   * fields both sides keep (the pair's `leaderMetadata`), so a field does not come and go with
   * the side reported.
   */
  async getLeader(election: string): Promise<LeaderInfo | null> {
    validate(election);
    const [onFrom, onTo] = await Promise.all([this.from.getLeader(election), this.to.getLeader(election)]);
    const info = onTo ?? onFrom;
    return info && keepDeclared(info, this.kept());
  }

  /**
   * dual: forces `from`, then `to` (its floor raised to `from`'s new token first, so the forced
   * term's token follows `from`'s sequence). Each side starts its forced term only once the lease
   * it revoked has ended, and a dual candidate leads only while it holds both: so nobody leads
   * beside the revoked leader, whichever kind it was. One side after the other, so this may take
   * up to two leases (usually one: the revoked dual leader gives `to` back when `from` refuses
   * its renewal, and `to` is then free).
   */
  async forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    validate(election, candidateId);
    assertCandidateId(candidateId, KIND, election);
    const onFrom = await this.from.admin!.forceLeader(election, candidateId, leaseMs);
    await this.to.tokenFloor?.raise(election, Math.max(0, onFrom.token - 1));
    return this.to.admin!.forceLeader(election, candidateId, leaseMs);
  }

  async clearLeader(election: string): Promise<void> {
    validate(election);
    // Both sides at once, each whatever the other does; each keeps its new terms back until the
    // lease it revoked has ended, and a dual candidate needs both.
    const results = await Promise.allSettled([this.to.admin!.clearLeader(election), this.from.admin!.clearLeader(election)]);
    throwFirstFailure(results);
  }

  /** Used on either side: a trace on one is enough. */
  async electionExists(election: string): Promise<boolean> {
    validate(election);
    return (await Promise.all([this.from.admin!.electionExists(election), this.to.admin!.electionExists(election)])).some(Boolean);
  }
}

/** `info` without the metadata fields `kept` does not declare. */
function keepDeclared(info: LeaderInfo, kept: LeaderMetadataKept): LeaderInfo {
  const out: LeaderInfo = { ...info };
  for (const field of Object.keys(kept) as Array<keyof LeaderMetadataKept>) {
    if (!kept[field]) delete out[field];
  }
  return out;
}
