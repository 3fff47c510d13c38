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
--   * holder_value, term_started_at, renewed_at and transitions are the leader metadata that
--     getLeader() reports (the holder's published value as UTF-8, when its term started, when it
--     last renewed, how many terms the election has had since the column exists);
--   * written_by is the server that last granted, extended or revoked the lease
--     (server_id/hostname:port): a promoted replica fences a row another server wrote before
--     it grants a new term there (see the README, "Replicas and failover");
--   * ascii_bin: names and ids compare byte for byte ('Node-1' is not 'node-1', and trailing
--     spaces count), which the default case-insensitive, pad-space collations would not do.
CREATE TABLE IF NOT EXISTS `conclave_election` (
  `name` VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'election name',
  `holder` VARCHAR(240) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'instance id (candidate id, space, nonce) or forced candidate id of the lease holder; NULL when released or cleared',
  `term` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fencing token: +1 whenever the lease changes hands',
  `expires_at` DATETIME(3) NULL COMMENT 'lease end, UTC, server clock (UTC_TIMESTAMP(3))',
  `term_floor` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the next term is above this (raiseTokenFloor, for migrations)',
  `holder_value` VARBINARY(1024) NULL COMMENT 'value published by the holder (UTF-8); NULL when none',
  `term_started_at` DATETIME(3) NULL COMMENT 'start of the current term, UTC, server clock',
  `renewed_at` DATETIME(3) NULL COMMENT 'last take, join or renewal of the lease, UTC, server clock',
  `transitions` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'terms started since this column exists (unlike term, not moved by term_floor)',
  `written_by` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'server that last granted, extended or revoked the lease (server_id/hostname:port); NULL when not known',
  PRIMARY KEY (`name`)
) ENGINE=InnoDB COMMENT='conclave leader election leases';

-- Upgrading a table created by an earlier build: MysqlBackend adds the missing columns itself on
-- first use (unless createSchema: false). Otherwise run, for each column the table lacks:
--   ALTER TABLE `conclave_election` ADD COLUMN `term_floor` BIGINT UNSIGNED NOT NULL DEFAULT 0;
--   ALTER TABLE `conclave_election` ADD COLUMN `holder_value` VARBINARY(1024) NULL;
--   ALTER TABLE `conclave_election` ADD COLUMN `term_started_at` DATETIME(3) NULL;
--   ALTER TABLE `conclave_election` ADD COLUMN `renewed_at` DATETIME(3) NULL;
--   ALTER TABLE `conclave_election` ADD COLUMN `transitions` BIGINT UNSIGNED NOT NULL DEFAULT 0;
--   ALTER TABLE `conclave_election` ADD COLUMN `written_by` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL;
