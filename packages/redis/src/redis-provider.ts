import { providerUrl, type BackendProvider } from '@conclave/core/spi';
import { RedisBackend } from './redis-backend';

/**
 * `redis://[user:pass@]host:6379[/db][?tokenClockFloor=false]`, `rediss://…` for TLS → a
 * `RedisBackend`; a comma list of hosts (`redis://h1:6379,h2:6379,h3:6379`) runs the quorum over
 * independent masters; `redis+sentinel://sentinel1:26379,…/<masterName>` follows the master
 * Sentinel names. The URL is checked (`parseRedisUrlSettings`, `parseRedisSentinelUrl`) before the
 * backend connects.
 */
export const redisProvider: BackendProvider = {
  kind: 'redis',
  schemes: ['redis', 'rediss', 'redis+sentinel'],
  urlForms: [
    { form: 'redis://[user:pass@]host:6379[/db][?tokenClockFloor=false]', what: 'one Redis master (rediss:// for TLS)' },
    { form: 'redis://h1:6379,h2:6379,h3:6379', what: 'Redlock quorum over independent masters' },
    {
      form: 'redis+sentinel://[[user]:pass@]host:26379[,host:26379…]/<masterName>[/<db>][?sentinelPassword=…&minReplicas=1]',
      what: 'the master Sentinel names; writes count once its replicas acknowledge them',
    },
  ],
  fromUrl(url) {
    return new RedisBackend({ url: providerUrl(redisProvider, url) });
  },
};
