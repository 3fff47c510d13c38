import { RECOVERY_SLACK_MS, type FaultEnvironmentCore } from '@conclave/test-harness/tools';
import { startPostgres } from './postgres-server';

/** The private PostgreSQL of a fault run (`single`, `duplicate-id`): one server with its own data directory. */
export async function startPostgresFaultEnvironment(leaseMs: number): Promise<FaultEnvironmentCore> {
  const server = await startPostgres();
  return {
    servers: [
      {
        index: 0,
        port: server.port,
        kill: () => server.kill(),
        restart: () => server.restart(),
        pause: () => server.pause(),
        resume: () => server.resume(),
      },
    ],
    urlFor: (ports) => `postgres://root@127.0.0.1:${ports[0]}/test`,
    restartLosesState: false,
    recoveryMarginMs: leaseMs + RECOVERY_SLACK_MS,
    close: () => server.stop(),
  };
}
