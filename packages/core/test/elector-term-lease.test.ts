import { describe, expect, test } from '@jest/globals';
import { Elector, MemoryBackend } from '@conclave/core';
import { forwardBackend, type CampaignResult, type RenewResult } from '@conclave/core/spi';

/** A memory backend that grants two thirds of the lease asked for, as ZooKeeper does of its session. */
function twoThirdsBackend() {
  const cut = (ms: number) => Math.floor((ms * 2) / 3);
  return forwardBackend(new MemoryBackend(), {
    campaign: async (next, ...args) => {
      const result = (await next(...args)) as CampaignResult;
      return result.role === 'leader' ? { ...result, leaseMs: cut(result.leaseMs) } : result;
    },
    renew: async (next, ...args) => {
      const result = (await next(...args)) as RenewResult;
      return result.held ? { ...result, leaseMs: cut(result.leaseMs) } : result;
    },
  });
}

describe('Elector health: the lease the term runs on', () => {
  test('a leader reports the shorter lease its backend granted, and the renew interval that follows from it; a follower reports none', async () => {
    const e = new Elector({ backend: twoThirdsBackend(), election: 'term-lease', candidateId: 'a', leaseMs: 1500 });
    expect(e.health()).toMatchObject({ termLeaseMs: null, renewEveryMs: null });
    await e.start();
    expect(e.isLeader()).toBe(true);
    const { termLeaseMs, renewEveryMs } = e.health();
    expect(termLeaseMs).toBe(1000);
    // Renewals fit twice within the granted lease (less the safety margin), not the one asked for.
    expect(renewEveryMs).toBeLessThanOrEqual((1000 - e.options.safetyMarginMs) / 2);
    await e.stop();
    expect(e.health()).toMatchObject({ termLeaseMs: null, renewEveryMs: null });
  });
});
