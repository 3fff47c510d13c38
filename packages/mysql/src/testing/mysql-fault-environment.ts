import { durableServerEnvironment, type FaultEnvironmentCore } from '@conclave/test-harness/tools';
import { startMariadb } from './mysql-server';

/** The private MariaDB of a fault run (`single`, `duplicate-id`): one server with its own datadir. */
export async function startMysqlFaultEnvironment(leaseMs: number): Promise<FaultEnvironmentCore> {
  return durableServerEnvironment(await startMariadb(), leaseMs, (port) => `mysql://root@127.0.0.1:${port}/test`);
}
