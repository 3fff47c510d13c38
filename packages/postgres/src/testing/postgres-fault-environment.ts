import { durableServerEnvironment, type FaultEnvironmentCore } from '@conclave/test-harness/tools';
import { startPostgres } from './postgres-server';

/** The private PostgreSQL of a fault run (`single`, `duplicate-id`): one server with its own data directory. */
export async function startPostgresFaultEnvironment(leaseMs: number): Promise<FaultEnvironmentCore> {
  return durableServerEnvironment(await startPostgres(), leaseMs, (port) => `postgres://root@127.0.0.1:${port}/test`);
}
