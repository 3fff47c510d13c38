import { expect } from '@jest/globals';
import type { CampaignResult } from '@conclave/core/spi';

/**
 * Asserts that a campaign won, and returns the result narrowed to a leader's: for checks that
 * must not be skipped by an `if (result.role === 'leader')` that nothing asserted.
 */
export function leaderOf(result: CampaignResult): Extract<CampaignResult, { role: 'leader' }> {
  expect(result.role).toBe('leader');
  if (result.role !== 'leader') throw new Error(`expected a leader, got ${JSON.stringify(result)}`);
  return result;
}
