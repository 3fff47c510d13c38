/**
 * `@conclave/core/internal`: helpers shared by the conclave backends, the CLI and the test
 * harness. Not part of the public API: they may change in any release, without a major version.
 */
export { TickBatcher } from './tick-batcher';
export { withTimeout } from './timing';
export { loadedOnFirstUse } from './loaded-on-first-use';
export { CampaignSlots, CAMPAIGNS_AT_ONCE } from './campaign-slots';
export { GridTimers, gridTimers } from './grid-timers';
export { describe as describeValue } from './validation';
export { closestWord } from './closest-word';
export { givenUpError, throwIfGivenUp, whenGivenUp } from './given-up';
export { campaignOutcome, heldByAnother, isLiveLease, leaderInfoFromRow, leaseRowsByName } from './lease-row';
export type { LeaseRow, LiveLeaseRow } from './lease-row';
