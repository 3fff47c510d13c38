import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import type { CampaignRequest } from '@conclave/core/spi';
import { KIND } from './side-requests';

/**
 * A candidate's dual campaigns, one at a time. A campaign the caller gave up on may still be
 * running, and what it gives back (`from`, once `to` failed) would end the term the next
 * campaign joined: so a candidate's campaigns take turns. Waiting for the turn ends, unsent, when
 * the caller gives up on the campaign.
 */
export class CampaignTurns {
  /** The end of each candidate's last campaign, by key. */
  private readonly campaigning = new Map<string, Promise<void>>();

  /** Runs `campaign` for the candidate of `key` once its previous campaign has ended. */
  async take<T>(key: string, request: CampaignRequest, campaign: () => Promise<T>): Promise<T> {
    const previous = this.campaigning.get(key);
    const run = (async () => {
      if (previous) await turnOrGiveUp(previous, request);
      return await campaign();
    })();
    const ended = run.then(
      () => undefined,
      () => undefined,
    );
    // The next campaign waits for this one, which ends after the previous one even if it gave up.
    const tail = previous ? previous.then(() => ended) : ended;
    this.campaigning.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.campaigning.get(key) === tail) this.campaigning.delete(key);
    }
  }

  clear(): void {
    this.campaigning.clear();
  }
}

/**
 * Waits for `previous` (never rejects); rejects with BACKEND_UNAVAILABLE, having sent nothing,
 * when the caller gives up first (its signal aborts, or its deadline passes).
 */
async function turnOrGiveUp(previous: Promise<void>, request: CampaignRequest): Promise<void> {
  const { signal, deadlineMs, election } = request;
  const gaveUp = new ConclaveError('BACKEND_UNAVAILABLE', 'campaign not sent: an earlier campaign of this candidate is still running', {
    backend: KIND,
    election,
  });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const givenUp = new Promise<boolean>((resolve) => {
    if (deadlineMs !== undefined) timer = setTimeout(() => resolve(true), Math.max(0, deadlineMs - performance.now()));
    if (signal) {
      onAbort = () => resolve(true);
      if (signal.aborted) resolve(true);
      else signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    if (await Promise.race([previous.then(() => false), givenUp])) throw gaveUp;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
