import { Exception } from 'node-zookeeper-client';
import type { ConclaveErrorCode } from '@conclave/core';

/** Losing the connection or the session: another try, or another server, may do. */
const UNAVAILABLE: readonly number[] = [Exception.CONNECTION_LOSS, Exception.SESSION_EXPIRED, Exception.OPERATION_TIMEOUT];

/**
 * The ConclaveError code for a ZooKeeper error code:
 * - `AUTH_FAILED` (the server refused the session's credentials, and closed it) → `BACKEND_AUTH`;
 * - `NO_AUTH` (the session lacks a permission on a node: the ACL of the election's path or of a
 *   parent, or digest credentials other than those of the nodes' creator — ZooKeeper accepts any
 *   digest credentials and only checks them against each node's ACL) and `INVALID_ACL` (the
 *   ACL given cannot be set, e.g. `auth` ids without credentials) → `BACKEND_MISCONFIGURED`;
 * - connection and session losses → `BACKEND_UNAVAILABLE`; anything else → `BACKEND_ERROR`.
 */
export function conclaveCodeOf(zkCode: number): ConclaveErrorCode {
  if (zkCode === Exception.AUTH_FAILED) return 'BACKEND_AUTH';
  if (zkCode === Exception.NO_AUTH || zkCode === Exception.INVALID_ACL) return 'BACKEND_MISCONFIGURED';
  return UNAVAILABLE.includes(zkCode) ? 'BACKEND_UNAVAILABLE' : 'BACKEND_ERROR';
}

/** `NO_AUTH on /path` (the name, and the node when the client names one), for messages. */
export function describeZkError(err: unknown, fallback: string): string {
  const e = err as { getName?: () => string; getPath?: () => string | undefined };
  const name = typeof e?.getName === 'function' ? e.getName() : fallback;
  const path = typeof e?.getPath === 'function' ? e.getPath() : undefined;
  return path ? `${name} on ${path}` : name;
}
