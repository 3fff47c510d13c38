/**
 * `@conclave/migrate/testing`: this backend's kit for the test harness (a ZooKeeper → MySQL
 * migration on private servers). Never loaded by the package's main entry.
 */
export { MIGRATION_MYSQL, MIGRATION_NODE_KINDS, MIGRATION_ZOOKEEPER, startMigrationServers } from './migration-environment';
export { migrateKit } from './migrate-kit';
