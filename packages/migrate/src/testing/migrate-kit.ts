import { RECOVERY_SLACK_MS, type BackendKit } from '@conclave/test-harness/tools';
import { zookeeperSessionTimeoutMs } from '@conclave/zookeeper/testing';
import { startMigrationServers } from './migration-environment';

/**
 * How the harness starts a ZooKeeper → MySQL migration: a private ZooKeeper and a private
 * MariaDB, and candidates that a rolling deployment moves between node kinds (see
 * `MIGRATION_NODE_KINDS`).
 */
export const migrateKit: BackendKit = {
  kind: 'migrate',
  // The migration's inner URLs are built by the providers beside it.
  providerModules: ['@conclave/migrate', '@conclave/zookeeper', '@conclave/mysql'],
  topologies: ['single'],
  // A run about something narrower than the whole catalogue: a rolling migration (a step in
  // every episode) with random SIGKILLs and blips of either side.
  faultWeights: {
    kill: 4,
    blip: 6,
    freeze: 0,
    partition: 0,
    cut: 0,
    delay: 0,
    'server-restart': 0,
    'server-pause': 0,
    'step-down': 0,
    link: 0,
    isolate: 0,
  },
  // A rolling migration needs a fleet: old, dual and to-only processes side by side.
  defaultCandidates: 5,
  async startFaultEnvironment(leaseMs) {
    const sessionTimeoutMs = zookeeperSessionTimeoutMs(leaseMs);
    return {
      ...(await startMigrationServers(sessionTimeoutMs)),
      // ZooKeeper's margin, the larger of the two sides': once both answer, a migration adds no
      // wait of its own. A dual candidate waits for `to` (half a lease at most, then gives `from`
      // back) or for the lease of whoever holds `to` (ended early by `to`'s wake-up) only while
      // `to` fails or is held, and a dual leader that loses either side gives the other back at
      // once; what is left is each side's own: a killed or cut-off holder's MySQL row lasts a
      // lease, its ZooKeeper node the session timeout, and the backoff after failed calls is at
      // most a lease.
      recoveryMarginMs: leaseMs + sessionTimeoutMs + RECOVERY_SLACK_MS,
      sessionTimeoutMs,
    };
  },
};
