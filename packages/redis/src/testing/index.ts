/**
 * `@conclave/redis/testing`: private redis-servers for tests, and this backend's kit for the
 * test harness and the bench. Never loaded by the package's main entry.
 */
export { RedisServer, startRedisServers } from './redis-server';
export type { RedisServerOptions } from './redis-server';
export { redisKit } from './redis-kit';
export { SentinelServer } from './redis-sentinel-server';
export type { SentinelServerOptions } from './redis-sentinel-server';
export { SENTINEL_DOWN_AFTER_MS, SENTINEL_FAILOVER_TIMEOUT_MS, SENTINEL_MASTER_NAME, startRedisSentinelEnvironment } from './redis-sentinel-environment';
