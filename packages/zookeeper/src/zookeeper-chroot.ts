import { performance } from 'node:perf_hooks';
import { CreateMode, Exception, State, createClient, type ACL, type Client } from 'node-zookeeper-client';
import { ConclaveError, type ConclaveErrorCode } from '@conclave/core';
import { hostsOf } from './zookeeper-refusal';
import { shutDown, zkCode } from './zookeeper-client-util';
import { conclaveCodeOf } from './zookeeper-error-codes';

const KIND = 'zookeeper';

/** The chroot suffix of a connect string (`/myapp` in `h:2181/myapp`); null when there is none. */
export function chrootOf(connect: string): string | null {
  const slash = connect.indexOf('/');
  if (slash === -1) return null;
  const chroot = connect.slice(slash);
  return chroot === '/' ? null : chroot;
}

export interface ChrootTarget {
  connect: string;
  auth: string | null;
  sessionTimeoutMs: number;
}

/**
 * Creates the chroot of `target.connect` and every missing ancestor, persistent, with `acl`, as
 * Curator creates its namespace. ZooKeeper resolves every path of a chrooted session below the
 * chroot, so that session cannot create the chroot itself: a short-lived client on the same
 * servers without it (and with the same credentials, which a creator-only ACL needs) does, and
 * is closed before this resolves. A node already there is fine. Throws what the server's answer
 * means (see `conclaveCodeOf`: `BACKEND_MISCONFIGURED` when not allowed to create it) or
 * `BACKEND_UNAVAILABLE` (no answer by `until`, performance.now() ms), naming the chroot and never
 * the credentials.
 */
export async function createChroot(target: ChrootTarget, acl: ACL[], until: number): Promise<void> {
  const chroot = chrootOf(target.connect);
  if (chroot === null) return;
  const client = createClient(hostsOf(target.connect).join(','), {
    sessionTimeout: target.sessionTimeoutMs,
    spinDelay: 200,
    retries: 0,
  });
  if (target.auth) client.addAuthInfo('digest', Buffer.from(target.auth));
  const fail = (code: ConclaveErrorCode, why: string, cause?: unknown): ConclaveError =>
    new ConclaveError(code, `cannot create the ZooKeeper chroot ${chroot}: ${why}`, { backend: KIND, cause });
  const work = (async () => {
    await connected(client);
    const parts = chroot.slice(1).split('/');
    for (let i = 1; i <= parts.length; i++) {
      const path = '/' + parts.slice(0, i).join('/');
      await new Promise<void>((resolve, reject) => {
        client.create(path, acl, CreateMode.PERSISTENT, (err) => {
          const code = zkCode(err);
          if (!err || code === Exception.NODE_EXISTS) resolve();
          else {
            const name = (err as { getName?: () => string }).getName?.() ?? String(err);
            reject(fail(code === undefined ? 'BACKEND_ERROR' : conclaveCodeOf(code), `${name} on ${path}`, err));
          }
        });
      });
    }
  })();
  // Still settles after a timeout (the close fails what is in flight): not an unhandled rejection.
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(fail('BACKEND_UNAVAILABLE', 'ZooKeeper did not answer in time')), Math.max(1, until - performance.now()));
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    await shutDown(client, client.getState() === State.SYNC_CONNECTED ? 1000 : 0);
  }
}

function connected(client: Client): Promise<void> {
  return new Promise<void>((resolve) => {
    client.once('connected', () => resolve());
    client.connect();
  });
}
