import { Client } from 'pg';
import type { BenchServer } from '@conclave/test-harness/tools';
import { startPostgres } from './postgres-server';

/**
 * The bench's PostgreSQL: a private server (own data directory, free port) with
 * pg_stat_statements, whose `calls` count every statement executed (PostgreSQL docs,
 * "pg_stat_statements").
 */
export async function startPostgresBenchServer(): Promise<BenchServer> {
  const server = await startPostgres({ startTimeoutMs: 90_000, statStatements: true });
  let probe: Client | null = new Client({ host: '127.0.0.1', port: server.port, user: 'root', database: 'test' });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
  } catch (err) {
    await server.stop();
    throw err;
  }
  // Statements the probe has sent. A statement's calls are counted once it ends, so a read
  // counts every earlier probe statement but not itself.
  let probeStatements = 0;
  const query = (sql: string) => {
    probeStatements++;
    return probe!.query(sql);
  };
  return {
    port: server.port,
    url: (p = server.port) => `postgres://root@127.0.0.1:${p}/test`,
    counterName: 'statements (pg_stat_statements calls, probe excluded)',
    description: `private postgres on 127.0.0.1:${server.port}`,
    async counters() {
      const result = await query('SELECT coalesce(sum(calls), 0)::bigint AS calls FROM pg_stat_statements');
      const value = Number((result.rows[0] as { calls: string } | undefined)?.calls ?? NaN);
      return { ops: value - (probeStatements - 1), reads: null };
    },
    async version() {
      const result = await query('SHOW server_version');
      return `postgres ${(result.rows[0] as { server_version?: string } | undefined)?.server_version ?? 'unknown'}`;
    },
    async close() {
      await probe?.end().catch(() => undefined);
      probe = null;
      await server.stop();
    },
  };
}
