import { describe, expect, test } from '@jest/globals';
import { Elector, MemoryBackend } from '@conclave/core';
import { forwardBackend, type CampaignResult } from '@conclave/core/spi';
import { maxGraceMs, termGraceMs } from '../src/commands/run';

/**
 * `conclave run` sends SIGTERM `grace` before the lease deadline the supervisor holds. Between two
 * healthy renewals the deadline comes as close as the term's lease − its renew interval − the
 * safety margin, so a grace sized on the lease asked for would stop CMD in normal operation when
 * the backend grants less (ZooKeeper: two thirds of its session).
 */
function grantingTwoThirds() {
  return forwardBackend(new MemoryBackend(), {
    campaign: async (next, ...args) => {
      const result = (await next(...args)) as CampaignResult;
      return result.role === 'leader' ? { ...result, leaseMs: Math.floor((result.leaseMs * 2) / 3) } : result;
    },
  });
}

describe('conclave run: the grace period of a term', () => {
  test('is cut to what the lease the backend granted allows, so SIGTERM never falls between two healthy renewals', async () => {
    const e = new Elector({ backend: grantingTwoThirds(), election: 'grace', candidateId: 'a', leaseMs: 1500 });
    await e.start();
    try {
      const asked = maxGraceMs(e);
      const grace = termGraceMs(e, asked);
      const { termLeaseMs, renewEveryMs } = e.health();
      // The closest the deadline comes between renewals, on the granted lease.
      const closest = termLeaseMs! - renewEveryMs! - e.options.safetyMarginMs;
      expect(grace).toBeLessThan(asked);
      expect(grace).toBeLessThanOrEqual(closest / 2);
      expect(grace).toBeGreaterThan(0);
    } finally {
      await e.stop();
    }
  });

  test('is the one asked for when the backend grants the whole lease, and when not leading', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'grace-full', candidateId: 'a', leaseMs: 1500 });
    expect(termGraceMs(e, 300)).toBe(300);
    await e.start();
    try {
      expect(termGraceMs(e, maxGraceMs(e))).toBe(maxGraceMs(e));
    } finally {
      await e.stop();
    }
  });
});
