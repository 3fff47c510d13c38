export { RedisBackend } from './redis-backend';
export { failFastRedisOptions, parseRedisUrl } from './redis-options';
export type { RedisBackendOptions } from './redis-options';
export { DEFAULT_KEY_PREFIX, electionKeys } from './redis-keys';
export type { ElectionKeys } from './redis-keys';
