import { Etcd3 } from 'etcd3';
import { ConsecutiveBreaker, circuitBreaker, handleAll, noop } from 'cockatiel';
import type { ResolvedEtcdOptions } from './etcd-options';

/**
 * The client the backend opens from `hosts`. etcd3 retries a failed call up to three times and
 * shuns a host for 5 s after three failures by default; the core already retries on its own
 * schedule and must hear of a failure within the call's deadline, so the backend makes no retry,
 * and with several hosts it skips a failed one for one second only.
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
    },
  });
}
