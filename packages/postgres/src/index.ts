/**
 * Leader election on PostgreSQL: one row per election in a logged table, leases measured with
 * the server's `clock_timestamp()`, `LISTEN`/`NOTIFY` that wakes followers at once. Start with
 * `PostgresBackend`.
 *
 * @module @conclave/postgres
 */
export { PostgresBackend } from './postgres-backend';
export { DEFAULT_TABLE, POSTGRES_URI_PARAMETERS, assertIdentifier, parsePostgresUri } from './postgres-options';
export type { PostgresBackendOptions, PostgresBackendCommonOptions, PostgresSslMode, PostgresUriSettings } from './postgres-options';
export { qualified, schemaSql } from './postgres-sql';
export { wakeChannel } from './postgres-wake-listener';
export { postgresProvider } from './postgres-provider';
