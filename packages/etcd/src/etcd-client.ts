import type { Etcd3, IOptions } from 'etcd3';
import { ConsecutiveBreaker, ConstantBackoff, ExponentialBackoff, circuitBreaker, handleType, noop, retry } from 'cockatiel';
import { etcd3 } from './etcd-driver';
import type { ResolvedEtcdOptions } from './etcd-options';

/**
 * The client the backend opens from `hosts`. etcd3 sends each call to a member picked at random,
 * retries a failed call up to three times and shuns a member for 5 s after three failures of any
 * kind by default. The core retries on its own schedule and must hear of a failure within the
 * call's deadline, so this client:
 * - with several members, shuns one for a second after it could not be reached (gRPC UNAVAILABLE:
 *   a member down or cut off, or one without a Raft leader, which refuses every call the backend
 *   makes: see `requireLeader`), and only then: an error a member answered (a compare that
 *   failed, a lease not found) says nothing about reaching it;
 * - tries a call that found its member unreachable once more at once, on another member (within
 *   the same deadline): with a member down, a third of all calls would fail otherwise, and a
 *   leader on a 1 s TTL loses its term to two such failures in a row. Every call the backend makes
 *   can be sent twice (compare-guarded transactions, reads, keep-alives);
 * - opens a lost watch stream again after at most a second (etcd3's default backoff grows to 30 s):
 *   a follower's wake-up comes back soon after its member does, and a backend closed during an
 *   outage leaves no reconnection timer running for long.
 */
export function openEtcdClient(options: Extract<ResolvedEtcdOptions, { mode: 'hosts' }>): Etcd3 {
  const { Etcd3: Client, GRPCUnavailableError } = etcd3();
  const several = options.hosts.length > 1;
  const unreachable = handleType(GRPCUnavailableError);
  return new Client({
    hosts: options.hosts,
    ...(options.auth ? { auth: { username: options.auth.username, password: options.auth.password } } : {}),
    dialTimeout: options.requestTimeoutMs,
    faultHandling: {
      global: several ? retry(unreachable, { maxAttempts: 1, backoff: new ConstantBackoff(0) }) : noop,
      host: () => (several ? circuitBreaker(unreachable, { halfOpenAfter: 1_000, breaker: new ConsecutiveBreaker(1) }) : noop),
      // etcd3 takes the factory (it calls next() for each backoff sequence), as its default does.
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 1_000 }) as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>,
    },
  });
}
