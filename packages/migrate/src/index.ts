export { MigratingBackend } from './migrating-backend';
export { MIGRATION_PHASES, resolveMigratingOptions } from './migration-options';
export type { MigratingBackendOptions, MigrationPhase } from './migration-options';
export { createMigratingBackend, migrateProvider } from './migrate-provider';
