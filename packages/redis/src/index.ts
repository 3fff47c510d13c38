/**
 * Leader election on Redis: a lease key taken and renewed by Lua scripts, on one master, a master
 * with replicas under Sentinel, or a Redlock quorum of independent masters. Start with `RedisBackend`.
 *
 * @module @conclave/redis
 */
export { RedisBackend } from './redis-backend';
export { REDIS_URL_PARAMETERS, failFastRedisOptions, parseRedisUrl, parseRedisUrlSettings } from './redis-options';
export type { RedisUrlSettings } from './redis-options';
export type { KeyspaceEventsMode, RedisBackendOptions, RedisClient } from './redis-options';
export { DEFAULT_KEY_PREFIX, electionKeys } from './redis-keys';
export type { ElectionKeys } from './redis-keys';
export { redisProvider } from './redis-provider';
export { DEFAULT_SENTINEL_PORT, REDIS_SENTINEL_URL_PARAMETERS, isSentinelUrl, parseRedisSentinelUrl } from './redis-sentinel-url';
export type { RedisSentinelUrlSettings } from './redis-sentinel-url';
