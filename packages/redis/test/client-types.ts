// Compiled by the type check of the tests, never run: ioredis clients fit the options.
import Redis from 'ioredis';
import { RedisBackend } from '@conclave/redis';

export function clientTypes(): void {
  new RedisBackend({ client: new Redis({ lazyConnect: true }) });
  new RedisBackend({ clients: [new Redis({ lazyConnect: true }), new Redis({ lazyConnect: true })] });
  // @ts-expect-error a string is not a client
  new RedisBackend({ client: 'not a client' });
  // @ts-expect-error an object without the client's methods
  new RedisBackend({ client: { status: 'ready' } });
}
