/**
 * `@conclave/mysql/testing`: a private MariaDB for tests, and this backend's kit for the test
 * harness and the bench. Never loaded by the package's main entry.
 */
export { startMariadb } from './mysql-server';
export type { MariadbServer, StartMariadbOptions } from './mysql-server';
export { mysqlKit } from './mysql-kit';
