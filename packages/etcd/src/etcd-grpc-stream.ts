import { Metadata, credentials, type CallOptions } from '@grpc/grpc-js';

/** Ends one of the client's gRPC streams and cancels its call; a stream already closed is left as it is. */
export function endStream(stream: { end(): unknown; cancel?: () => void }): void {
  try {
    stream.end();
    stream.cancel?.();
  } catch {
    // already closed
  }
}

/**
 * Call options of a stream that must end when its member has no Raft leader: etcd's
 * `hasleader` metadata (what Go clients send with `WithRequireLeader`). A member cut off from the
 * others keeps a plain watch open and silent, since it applies no change the others make, so a
 * follower waiting on it would not see its predecessor go until the member rejoins. With this
 * metadata the member refuses the stream while it knows no leader, and ends it within a few
 * election timeouts of losing one; the stream's owner then opens it again on another member.
 */
export function requireLeader(): CallOptions {
  return {
    credentials: credentials.createFromMetadataGenerator((_params, callback) => {
      const metadata = new Metadata();
      metadata.set('hasleader', 'true');
      callback(null, metadata);
    }),
  };
}
