import { createConnection, type Connection } from 'mysql2/promise';
import type { BenchServer } from '@conclave/test-harness/tools';
import { startMariadb } from './mysql-server';

/**
 * The bench's MySQL: a private mariadbd (own datadir, free port); if it cannot be started, the
 * shared server at 127.0.0.1:3306 (then the Questions counter also sees other users' traffic,
 * which the description says).
 */
export async function startMysqlBenchServer(): Promise<BenchServer> {
  let port = 3306;
  let description = 'shared MariaDB on 127.0.0.1:3306 (Questions also counts other clients)';
  let stop: () => Promise<void> = async () => undefined;
  try {
    const server = await startMariadb({ startTimeoutMs: 90_000 });
    port = server.port;
    description = `private mariadbd on 127.0.0.1:${port}`;
    stop = () => server.stop();
  } catch (err) {
    console.error(`bench: private mariadbd did not start (${(err as Error).message}); using the shared server on 3306`);
  }
  let probe: Connection | null;
  try {
    probe = await createConnection({ host: '127.0.0.1', port, user: 'root', database: 'test' });
  } catch (err) {
    await stop();
    throw err;
  }
  // Statements the probe connection has sent: Questions counts each (a statement is counted as
  // it starts, so a status read counts itself), and `counters()` leaves them out.
  let probeStatements = 0;
  const query = (sql: string) => {
    probeStatements++;
    return probe!.query(sql);
  };
  return {
    port,
    url: (p = port) => `mysql://root@127.0.0.1:${p}/test`,
    counterName: 'statements (SHOW GLOBAL STATUS Questions, probe excluded)',
    description,
    async counters() {
      const [rows] = await query("SHOW GLOBAL STATUS LIKE 'Questions'");
      const value = Number((rows as Array<{ Value: string }>)[0]?.Value ?? NaN);
      return { ops: value - probeStatements, reads: null };
    },
    async version() {
      const [rows] = await query('SELECT VERSION() AS v');
      return `mysql ${(rows as Array<{ v: string }>)[0]?.v ?? 'unknown'}`;
    },
    async close() {
      await probe?.end().catch(() => undefined);
      probe = null;
      await stop();
    },
  };
}
