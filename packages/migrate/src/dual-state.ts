import type { CampaignResult, ElectionBackend } from '@conclave/core/spi';

/** The two leases a dual candidate holds for one term. */
export interface DualTerm {
  fromToken: number;
  toToken: number;
}

/** Who a give-back is for. */
export interface Holder {
  election: string;
  candidateId: string;
}

/**
 * What a MigratingBackend keeps about its candidates in `dual`, each by `termKey(election,
 * candidate)`: the terms they hold, the tokens they have led with, and a `to` known to be taken.
 */
export class DualState {
  /** Terms this backend's candidates hold in `dual`. */
  readonly terms = new Map<string, DualTerm>();
  /** The highest `from` token each candidate has led with in `dual`; a new term never reuses one. */
  readonly ledFrom = new Map<string, number>();
  /** The same for `to`. */
  readonly ledTo = new Map<string, number>();
  /**
   * A `to` that answered follower, by candidate, and until when its leader's lease runs;
   * meanwhile `campaign` answers the same without taking `from`.
   */
  readonly toBusy = new Map<string, { until: number; answer: CampaignResult & { role: 'follower' } }>();

  constructor(
    private readonly from: ElectionBackend,
    private readonly to: ElectionBackend,
  ) {}

  /** Records a term taken on both sides, and the tokens led with. */
  record(key: string, term: DualTerm): void {
    this.terms.set(key, term);
    this.ledFrom.set(key, Math.max(term.fromToken, this.ledFrom.get(key) ?? 0));
    this.ledTo.set(key, Math.max(term.toToken, this.ledTo.get(key) ?? 0));
  }

  /** Forgets a dual term and gives back the side(s) named; never throws. */
  async dropTerm(key: string, held: DualTerm, who: Holder, ...sides: Array<'from' | 'to'>): Promise<void> {
    if (this.terms.get(key) === held) this.terms.delete(key);
    await Promise.allSettled(
      sides.map((side) =>
        side === 'to'
          ? this.to.release({ ...who, token: held.toToken })
          : this.from.release({ ...who, token: held.fromToken }),
      ),
    );
  }

  clear(): void {
    this.terms.clear();
    this.ledFrom.clear();
    this.ledTo.clear();
    this.toBusy.clear();
  }
}
