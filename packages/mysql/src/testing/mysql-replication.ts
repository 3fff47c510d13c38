import { createConnection } from 'mysql2/promise';

/**
 * The MariaDB replication statements a replicated fault environment needs, each on a short-lived
 * root connection to a private server (grant tables are off there: root replicates).
 */

/** Runs `statements` in order on the server at `port`; the rows of the last one. */
export async function sqlOn(port: number, ...statements: string[]): Promise<Array<Record<string, unknown>>> {
  const connection = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 10_000 });
  try {
    let rows: unknown = [];
    for (const statement of statements) [rows] = await connection.query(statement);
    return rows as Array<Record<string, unknown>>;
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/**
 * Makes the server at `replicaPort` replicate the primary reached at `sourcePort` (a proxy, so
 * the link can be stalled) by GTID from the primary's first event: the replica started empty and
 * the primary's binary log holds everything since it was created (see `replicationServerId`).
 */
export async function startReplicating(replicaPort: number, sourcePort: number): Promise<void> {
  await sqlOn(
    replicaPort,
    "SET GLOBAL gtid_slave_pos = ''",
    `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${sourcePort}, MASTER_USER = 'root', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos`,
    'START SLAVE',
  );
}

/**
 * Resolves once the replica has applied everything the primary had logged when this was called
 * (`MASTER_GTID_WAIT`); rejects after `timeoutMs`.
 */
export async function waitCaughtUp(primaryPort: number, replicaPort: number, timeoutMs: number): Promise<void> {
  const [position] = await sqlOn(primaryPort, 'SELECT @@gtid_binlog_pos AS pos');
  const pos = String(position?.pos ?? '');
  const [waited] = await sqlOn(replicaPort, `SELECT MASTER_GTID_WAIT('${pos.replace(/[^0-9,-]/g, '')}', ${timeoutMs / 1000}) AS r`);
  if (Number(waited?.r) !== 0) throw new Error(`replica on ${replicaPort} did not reach ${pos} within ${timeoutMs} ms`);
}

/** Promotes a replica: it stops replicating and forgets its primary (it takes writes already: no read_only here). */
export async function promote(replicaPort: number): Promise<void> {
  await sqlOn(replicaPort, 'STOP SLAVE', 'RESET SLAVE ALL');
}
