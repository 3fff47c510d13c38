/**
 * `@conclave/sql-lease`: the lease-row protocol of conclave's SQL backends, written once.
 * `@conclave/mysql` and `@conclave/postgres` are each a `LeaseRowDialect` (SQL text, driver,
 * wake-up) given to `SqlLeaseBackend`. For backend authors; applications use those packages.
 */
export { LEASE_ROW_METADATA, SqlLeaseBackend } from './sql-lease-backend';
export type { SqlLeaseSettings } from './sql-lease-backend';
export type { GuardedCalls, LeaseRowDialect, LeaseWakeUp } from './lease-row-dialect';
export { assertBooleanOptions, checkPoolOrUri, timingOptions } from './lease-row-options';
export type { SqlLeaseTimingOptions } from './lease-row-options';
export { parseServerUrl } from './server-url';
export type { ServerUrl, ServerUrlForm } from './server-url';
