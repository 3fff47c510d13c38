/**
 * Moves an election from one backend to another, one process at a time, with never two leaders:
 * `MigratingBackend` in the phases `from-only`, `dual` and `to-only`.
 *
 * @module @conclave/migrate
 */
export { MigratingBackend } from './migrating-backend';
export { MIGRATION_PHASES, resolveMigratingOptions } from './migration-options';
export type { MigratingBackendOptions, MigrationPhase } from './migration-options';
export { createMigratingBackend, migrateProvider } from './migrate-provider';
