-- conclave lease table for @conclave/postgres (PostgreSQL 12+).
-- The same DDL that PostgresBackend.ensureSchema() runs (postgres-sql.ts, schemaSql()); the
-- default table name is conclave_election, change it here and in the `table` option together
-- (and qualify it with the `schema` option's schema if you use one).
--
-- One row per election:
--   * holder is the Elector's instance id (candidate id, a space, a nonce: duplicated candidate
--     ids never share a term), a bare candidate id after forceLeader, a tombstone (a space and a
--     number) while a revoked lease runs out, or NULL when the lease was released: the row, and
--     with it the term, is never deleted, so fencing tokens keep increasing across
--     clearLeader/forceLeader;
--   * term is the fencing token, +1 whenever the lease changes hands (and above term_floor,
--     which @conclave/migrate raises so tokens keep increasing when an election changes backend);
--   * expires_at is the lease end, written and compared only with the server's clock_timestamp()
--     (never a client clock, never now(), which is the start of the transaction);
--   * holder_value, term_started_at, renewed_at and transitions are the leader metadata that
--     getLeader() reports;
--   * written_by is the server that last granted, extended or revoked the lease (its system
--     identifier and timeline, which a promotion changes): a row another server wrote reached
--     this one by replication, and is fenced before any lease is granted on it (README,
--     "Replicas and failover"); NULL in rows written before the column existed;
--   * COLLATE "C": names and ids compare byte for byte, whatever the database's collation.
CREATE TABLE IF NOT EXISTS "conclave_election" (
  name text COLLATE "C" NOT NULL PRIMARY KEY,
  holder text COLLATE "C" NULL,
  term bigint NOT NULL DEFAULT 0,
  term_floor bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NULL,
  holder_value text NULL,
  term_started_at timestamptz NULL,
  renewed_at timestamptz NULL,
  transitions bigint NOT NULL DEFAULT 0,
  written_by text COLLATE "C" NULL
);
-- A table made by an earlier version gets the column the same way (ensureSchema() does it
-- unless createSchema: false):
ALTER TABLE "conclave_election" ADD COLUMN IF NOT EXISTS written_by text COLLATE "C" NULL;
