// Objects that are not what an option asks for must not compile.
import { MysqlBackend } from '@conclave/mysql';
import { RedisBackend } from '@conclave/redis';
import { ZookeeperBackend } from '@conclave/zookeeper';

export function wrongOptions(): void {
  // @ts-expect-error not a pool
  new MysqlBackend({ pool: { not: 'a pool' } });
  // @ts-expect-error not a client
  new RedisBackend({ client: 'not a client' });
  // @ts-expect-error not a client
  new ZookeeperBackend({ client: 'not a client' });
  // @ts-expect-error not an ACL
  new ZookeeperBackend({ connect: '127.0.0.1:2181', acl: ['world:anyone'] });
}
