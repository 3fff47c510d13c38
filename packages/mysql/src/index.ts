export { MysqlBackend } from './mysql-backend';
export { DEFAULT_TABLE, assertTableName, parseMysqlUri } from './mysql-options';
export type { MysqlBackendOptions, MysqlBackendCommonOptions, MysqlUriSettings } from './mysql-options';
export type { MysqlPool, MysqlPoolConnection, MysqlDedicatedConnection } from './mysql-pool';
export { schemaSql } from './mysql-sql';
