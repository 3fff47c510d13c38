import type { CallOptions } from '@grpc/grpc-js';
import { grpc } from './etcd-driver';

/**
 * Call options of every call and stream the backend makes: etcd's `hasleader` metadata (what Go
 * clients send with `WithRequireLeader`), so that a member without a Raft leader refuses them at
 * once (gRPC UNAVAILABLE, "no leader") instead of keeping them open.
 *
 * A member cut off from the others applies none of the changes they make: it would keep a plain
 * watch open and silent until it rejoins (a follower waiting on it would not see its predecessor
 * go), and hold a read or a keep-alive until its deadline. With this metadata the member ends
 * such a stream within a few election timeouts of losing its leader, and refuses a call while it
 * has none; the client tries a refused call once more on another member, and the stream's owner
 * opens it again, on another member when the refusing one is shunned (see `openEtcdClient`).
 */
export function requireLeader(): CallOptions {
  made ??= {
    credentials: grpc().credentials.createFromMetadataGenerator((_params, callback) => {
      const metadata = new (grpc().Metadata)();
      metadata.set('hasleader', 'true');
      callback(null, metadata);
    }),
  };
  return made;
}
let made: CallOptions | undefined;
