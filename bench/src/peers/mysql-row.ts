/**
 * Peer: the MySQL lease-row pattern from common blog posts. One row per election; every
 * candidate polls once a second with an upsert that takes the row over only if its
 * `last_seen_active` is older than the lease, and otherwise refreshes it only for its owner;
 * then reads who owns the row. A process believes it leads from the poll that said so until a
 * poll says otherwise. Timestamps are TIMESTAMP columns (second resolution), as in the pattern.
 * Plain mysql2, no conclave code.
 */
import { createConnection, type Connection } from 'mysql2/promise';
import { now, runPeer } from './peer-child';

const POLL_MS = 1000;
const TABLE = 'bench_peer_leader_row';

runPeer((config, events) => {
  const url = new URL(config.backend);
  const leaseSec = Math.ceil(config.leaseMs / 1000);
  let conn: Connection | null = null;
  let leading = false;
  let timer: NodeJS.Timeout | null = null;
  let polling = false;
  let stopped = false;

  const connect = async () => {
    conn = await createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username || 'root'),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1) || 'test',
    });
    // A dropped connection is replaced at the next poll.
    conn.on('error', () => {
      conn = null;
    });
  };

  const poll = async () => {
    if (polling || stopped) return;
    polling = true;
    try {
      if (!conn) await connect();
      const sentAt = now();
      // Assignments run left to right: leader_id first (taken over only when the row is stale),
      // then last_seen_active, refreshed only when the row now names this candidate.
      await conn!.query(
        `INSERT INTO ${TABLE} (election, leader_id, last_seen_active) VALUES (?, ?, NOW())
         ON DUPLICATE KEY UPDATE
           leader_id = IF(last_seen_active < NOW() - INTERVAL ? SECOND, VALUES(leader_id), leader_id),
           last_seen_active = IF(leader_id = VALUES(leader_id), VALUES(last_seen_active), last_seen_active)`,
        [config.election, config.candidateId, leaseSec],
      );
      const [rows] = await conn!.query('SELECT leader_id FROM ' + TABLE + ' WHERE election = ?', [config.election]);
      const owner = (rows as Array<{ leader_id: string }>)[0]?.leader_id;
      if (stopped) return;
      if (owner === config.candidateId) {
        leading = true;
        events.elected();
        events.lease(sentAt + config.leaseMs);
      } else if (leading) {
        leading = false;
        events.revoked('another owner');
      }
    } catch (err) {
      events.warn(`poll: ${(err as Error).message}`);
      conn?.destroy();
      conn = null;
    } finally {
      polling = false;
    }
  };

  return {
    async start() {
      await connect();
      await conn!.query(
        `CREATE TABLE IF NOT EXISTS ${TABLE} (
           election VARCHAR(191) NOT NULL PRIMARY KEY,
           leader_id VARCHAR(191) NOT NULL,
           last_seen_active TIMESTAMP NOT NULL
         )`,
      );
      await poll();
      timer = setInterval(() => void poll(), POLL_MS);
    },
    isLeader: () => leading,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      // Giving up: delete the row if it is ours; the others take it at their next poll.
      if (leading && conn) {
        leading = false;
        await conn.query(`DELETE FROM ${TABLE} WHERE election = ? AND leader_id = ?`, [config.election, config.candidateId]);
      }
      await conn?.end().catch(() => undefined);
    },
  };
});
