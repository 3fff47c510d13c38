/**
 * `@conclave/postgres/testing`: a private PostgreSQL for tests, and this backend's kit for the
 * test harness and the bench. Never loaded by the package's main entry.
 */
export { startPostgres } from './postgres-server';
export type { PostgresServer, StartPostgresOptions } from './postgres-server';
export { postgresKit } from './postgres-kit';
export type { PostgresReplicatedEnvironment } from './postgres-replicated-environment';
