import { Etcd3, type IOptions } from 'etcd3';
import { ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleAll, noop } from 'cockatiel';
import type { ResolvedEtcdOptions } from './etcd-options';

/**
 * The client the backend opens from `hosts`. etcd3 retries a failed call up to three times and
 * shuns a host for 5 s after three failures by default; the core already retries on its own
 * schedule and must hear of a failure within the call's deadline, so the backend makes no retry,
 * and with several hosts it skips a failed one for one second only. Its watch stream, lost, is
 * opened again after at most a second (etcd3's default backoff grows to 30 s): a follower's
 * wake-up comes back soon after its member does, and a backend closed during an outage leaves no
 * reconnection timer running for long.
 */
export function openEtcdClient(options: Extract<ResolvedEtcdOptions, { mode: 'hosts' }>): Etcd3 {
  const several = options.hosts.length > 1;
  return new Etcd3({
    hosts: options.hosts,
    ...(options.auth ? { auth: { username: options.auth.username, password: options.auth.password } } : {}),
    dialTimeout: options.requestTimeoutMs,
    faultHandling: {
      global: noop,
      host: () => (several ? circuitBreaker(handleAll, { halfOpenAfter: 1_000, breaker: new ConsecutiveBreaker(1) }) : noop),
      // etcd3 takes the factory (it calls next() for each backoff sequence), as its default does.
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 1_000 }) as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>,
    },
  });
}
