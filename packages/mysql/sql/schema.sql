-- conclave lease table for @conclave/mysql (MySQL 5.7, 8.0, 8.4; MariaDB 10.6+).
-- The same DDL that MysqlBackend.ensureSchema() runs (mysql-sql.ts, schemaSql()); the default
-- table name is conclave_election, change it here and in the `table` option together.
--
-- One row per election. Unlike the usual lease-row SQL:
--   * holder is the Elector's instance id (candidate id, a space, a nonce: duplicated candidate
--     ids never share a term), a bare candidate id after forceLeader, or NULL when the lease was
--     released or cleared: the row, and with it the term, is
--     never deleted, so fencing tokens keep increasing across clearLeader/forceLeader;
--   * term is the fencing token, +1 whenever the lease changes hands (and above term_floor,
--     which @conclave/migrate raises so tokens keep increasing when an election changes backend);
--   * expires_at is the lease end in UTC with millisecond precision, written and compared only
--     with the server's UTC_TIMESTAMP(3) (never a client clock, never the session time zone);
--   * ascii_bin: names and ids compare byte for byte ('Node-1' is not 'node-1', and trailing
--     spaces count), which the default case-insensitive, pad-space collations would not do.
CREATE TABLE IF NOT EXISTS `conclave_election` (
  `name` VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'election name',
  `holder` VARCHAR(240) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'instance id (candidate id, space, nonce) or forced candidate id of the lease holder; NULL when released or cleared',
  `term` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fencing token: +1 whenever the lease changes hands',
  `term_floor` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the next term is above this (raiseTokenFloor, for migrations)',
  `expires_at` DATETIME(3) NULL COMMENT 'lease end, UTC, server clock (UTC_TIMESTAMP(3))',
  PRIMARY KEY (`name`)
) ENGINE=InnoDB COMMENT='conclave leader election leases';
