/**
 * ZooKeeper session timeout used by fault runs: a granted lease is 2/3 of it, i.e. `leaseMs`
 * (the backend grants the Elector 2/3 of the session, see the package README).
 */
export function zookeeperSessionTimeoutMs(leaseMs: number): number {
  return Math.ceil((leaseMs * 3) / 2);
}

/**
 * Time a three-JVM ensemble on two shared cores takes to elect a new leader and resync after its
 * leader died or was isolated, ms (measured: 1–3 s; twice that on a busy machine).
 */
export const ENSEMBLE_ELECTION_MS = 6000;
