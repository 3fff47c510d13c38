/**
 * Leader election on MySQL or MariaDB: one row per election in an InnoDB table, leases measured
 * with the server's `NOW(3)`, named locks that wake followers at once. Start with `MysqlBackend`.
 *
 * @module @conclave/mysql
 */
export { MysqlBackend } from './mysql-backend';
export { DEFAULT_TABLE, MYSQL_URI_PARAMETERS, assertTableName, parseMysqlUri } from './mysql-options';
export { mysql2SslOption } from './mysql-tls';
export type { Mysql2SslOption, MysqlTlsSettings } from './mysql-tls';
export type { MysqlBackendOptions, MysqlBackendCommonOptions, MysqlUriSettings } from './mysql-options';
export type { MysqlPool, MysqlPoolConnection, MysqlDedicatedConnection, MysqlPoolInput, MysqlPoolLike } from './mysql-pool-types';
export { schemaSql } from './mysql-sql';
export { mysqlProvider } from './mysql-provider';
