// Compiled by the type check of the tests, never run: the driver's client and ACL fit the options.
import { ACL, Id, Permission, createClient } from 'node-zookeeper-client';
import { ZookeeperBackend } from '@conclave/zookeeper';

export function clientTypes(): void {
  const client = createClient('127.0.0.1:2181');
  new ZookeeperBackend({ client, acl: [new ACL(Permission.ALL, new Id('world', 'anyone'))] });
  // @ts-expect-error a string is not a client
  new ZookeeperBackend({ client: 'not a client' });
  // @ts-expect-error an object without the client's methods
  new ZookeeperBackend({ client: { getState: () => 0 } });
}
