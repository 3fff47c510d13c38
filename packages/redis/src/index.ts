export { RedisBackend } from './redis-backend';
export { REDIS_URL_PARAMETERS, failFastRedisOptions, parseRedisUrl, parseRedisUrlSettings } from './redis-options';
export type { RedisUrlSettings } from './redis-options';
export type { KeyspaceEventsMode, RedisBackendOptions, RedisClient } from './redis-options';
export { DEFAULT_KEY_PREFIX, electionKeys } from './redis-keys';
export type { ElectionKeys } from './redis-keys';
export { redisProvider } from './redis-provider';
export { DEFAULT_SENTINEL_PORT, REDIS_SENTINEL_URL_PARAMETERS, isSentinelUrl, parseRedisSentinelUrl } from './redis-sentinel-url';
export type { RedisSentinelUrlSettings } from './redis-sentinel-url';
