import type { ConclaveErrorCode } from '@conclave/core';

/**
 * Answers about the credentials, which no retry changes: a wrong password or an unknown user
 * ("authentication failed, invalid user ID or password"), none given where the cluster has
 * authentication on ("user name is empty"), or gRPC's UNAUTHENTICATED.
 */
const AUTH = /\betcdserver: (authentication failed|user name is empty|user name not found)\b|^UNAUTHENTICATED\b/;

/**
 * Answers about what this configuration may do, which no retry changes either: the user's roles
 * do not cover the election's keys ("permission denied", gRPC's PERMISSION_DENIED), or
 * credentials were given to a cluster without authentication ("authentication is not enabled":
 * etcd then refuses every call).
 */
const MISCONFIGURED = /\betcdserver: (permission denied|authentication is not enabled)\b|^PERMISSION_DENIED\b/;

/**
 * The code of a failed etcd call: `BACKEND_AUTH` or `BACKEND_MISCONFIGURED` for the answers
 * above (matched on etcd's message: etcd3 gives a class to some of them, e.g.
 * `EtcdAuthenticationFailedError`, `EtcdPermissionDeniedError`, not to all), else
 * `BACKEND_UNAVAILABLE`. etcd's messages never quote the password.
 */
export function etcdErrorCode(err: unknown): ConclaveErrorCode {
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return 'BACKEND_UNAVAILABLE';
  if (AUTH.test(message)) return 'BACKEND_AUTH';
  if (MISCONFIGURED.test(message)) return 'BACKEND_MISCONFIGURED';
  return 'BACKEND_UNAVAILABLE';
}
