/**
 * Peer: `@sesamecare-oss/redlock`'s `using()` on one Redis, with its automatic extension. Each
 * candidate calls `using([key], lease, routine)` with unlimited retries; the one that gets the
 * lock leads while its routine runs and the abort signal has not fired (how the library asks
 * users to guard their work); the routine returns on stop, and `using()` releases the lock.
 */
import Redis from 'ioredis';
import { Redlock, type Lock } from '@sesamecare-oss/redlock';
import { now, runPeer } from './peer-child';

runPeer((config, events) => {
  const redis = new Redis(config.backend, { lazyConnect: true, maxRetriesPerRequest: null });
  redis.on('error', (err: Error) => events.warn(`redis: ${err.message}`));
  // retryDelay/retryJitter are the library's defaults; retryCount -1 = keep trying.
  const redlock = new Redlock([redis], { retryCount: -1 });
  redlock.on('error', () => undefined);
  const key = `bench-peer-lock:${config.election}`;
  let leading = false;
  let stopped = false;
  let release: (() => void) | null = null;
  let loop: Promise<void> = Promise.resolve();

  // The library's `expiration` is the send instant + duration − a drift allowance (driftFactor
  // 0.01 by default × duration + 2 ms); the key's PX on the server is the full duration.
  const driftMs = Math.round(0.01 * config.leaseMs) + 2;
  /** The lock's expiry is on the wall clock (Date.now()); the bench's clock is the monotonic one. */
  const reportLease = (lock: Lock) => events.lease(now() + (lock.expiration + driftMs - Date.now()));

  const campaign = async () => {
    while (!stopped) {
      try {
        await redlock.using([key], config.leaseMs, async (signal, context) => {
          if (stopped) return;
          leading = true;
          events.elected();
          reportLease(context.lock);
          // Each extension replaces context.lock; watch for it to report the new expiry.
          let seen = context.lock;
          const watch = setInterval(() => {
            if (context.lock !== seen) {
              seen = context.lock;
              reportLease(seen);
            }
          }, 10);
          try {
            await new Promise<void>((resolve) => {
              release = resolve;
              signal.addEventListener('abort', () => resolve());
            });
          } finally {
            clearInterval(watch);
            release = null;
            leading = false;
            events.revoked(signal.aborted ? `aborted: ${signal.error?.message ?? ''}` : 'released');
          }
        });
      } catch (err) {
        if (!stopped) events.warn(`using: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  return {
    async start() {
      await redis.connect();
      loop = campaign();
    },
    isLeader: () => leading,
    async stop() {
      stopped = true;
      release?.();
      // Let using() release the lock if this process holds it; a follower's retries stop with the process.
      await Promise.race([loop, new Promise((r) => setTimeout(r, 2000))]);
      redis.disconnect();
    },
  };
});
