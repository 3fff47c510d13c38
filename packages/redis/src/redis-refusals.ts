import { ConclaveError } from '@conclave/core';

const KIND = 'redis';

/**
 * Replies that refuse the credentials: `NOAUTH` (the server needs a password and got none),
 * `WRONGPASS` (Redis ≥ 6: unknown user, wrong password or disabled user), `ERR invalid password`
 * (Redis ≤ 5). Waiting does not change them.
 */
const AUTH_REPLIES = /^(NOAUTH|WRONGPASS)\b|^ERR invalid password\b/;

/**
 * Replies that say the ACL user lacks a command, key or channel this backend needs: `NOPERM`, or
 * what a `redis.call` inside a script gets for the same reason on Redis 7.0 ("The user executing
 * the script can't run this command…", "…can't access at least one of the keys…").
 */
const PERMISSION_REPLIES = /^NOPERM\b|\bThe user executing the script can't\b/;

/**
 * The permanent refusal a Redis error means, or null when it is not one: `BACKEND_AUTH` for
 * refused credentials, `BACKEND_MISCONFIGURED` for a missing ACL permission. The server's reply
 * never quotes the password, so its text is kept in the message.
 */
export function refusalOf(err: unknown, label: string, election?: string): ConclaveError | null {
  if (!(err instanceof Error)) return null;
  if (AUTH_REPLIES.test(err.message)) {
    return new ConclaveError('BACKEND_AUTH', `${label} refused the credentials: ${err.message}`, { backend: KIND, election, cause: err });
  }
  if (PERMISSION_REPLIES.test(err.message)) {
    return new ConclaveError('BACKEND_MISCONFIGURED', `${label} refused a command this backend needs (ACL): ${err.message}`, {
      backend: KIND,
      election,
      cause: err,
    });
  }
  return null;
}
