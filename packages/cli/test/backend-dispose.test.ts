import { MysqlBackend } from '@conclave/mysql';
import { RedisBackend } from '@conclave/redis';
import { ZookeeperBackend } from '@conclave/zookeeper';

/** `await using` on the server backends: the scope's end is their close(). No server needed. */
describe.each([
  ['MysqlBackend', MysqlBackend],
  ['RedisBackend', RedisBackend],
  ['ZookeeperBackend', ZookeeperBackend],
] as const)('%s with await using', (_name, Backend) => {
  test('leaving the scope calls close() once', async () => {
    const close = jest.spyOn(Backend.prototype, 'close').mockResolvedValue();
    try {
      {
        // An instance without its constructor: no connection is made.
        await using backend = Object.create(Backend.prototype) as InstanceType<typeof Backend>;
        expect(close).not.toHaveBeenCalled();
        void backend;
      }
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      close.mockRestore();
    }
  });
});
