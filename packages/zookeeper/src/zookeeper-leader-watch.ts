import { performance } from 'node:perf_hooks';
import { Exception } from 'node-zookeeper-client';
import { zkCode } from './zookeeper-client-util';
import type { SessionHandle, ZookeeperSession } from './zookeeper-session';

/** After a failed attempt to arm the watch (no answer in time), try again after this, ms. */
const RETRY_MS = 1_000;

export interface ChildrenWatchOptions {
  session: ZookeeperSession;
  /** The election node whose children are the candidates' nodes and the fences. */
  path: string;
  requestTimeoutMs: number;
  /** Creates the election node when it does not exist yet (a children watch needs a node). */
  createNode: (handle: SessionHandle, until: number) => Promise<void>;
  onChange: () => void;
}

/**
 * Follows an election for an observer: a children watch on the election node fires when a
 * candidate's node is created or deleted (a release, a crash's session expiry, a force or a clear),
 * which is when the head of the queue, the leader, can change. ZooKeeper watches fire once, so the
 * watch is armed again on each event, and on every session event (a reconnect, or a new session
 * after an expiry, whose client has none of the old watches). Each arming, successful or not, is
 * a hint: a change may have happened since the last one. Returns the function that stops it.
 */
export function watchChildren({ session, path, requestTimeoutMs, createNode, onChange }: ChildrenWatchOptions): () => void {
  let stopped = false;
  let arming = false;
  let again = false;
  let retry: NodeJS.Timeout | null = null;

  const hint = () => {
    setImmediate(() => {
      if (!stopped) onChange();
    });
  };

  // The hint follows each arming, not the event: the children are read where the watch is set,
  // so a getLeader made after the hint sees every change made before the watch could fire.
  const arm = (): void => {
    if (stopped) return;
    if (arming) {
      again = true;
      return;
    }
    arming = true;
    again = false;
    void armOnce().then((ok) => {
      arming = false;
      if (stopped) return;
      hint();
      if (again) arm();
      else if (!ok && retry === null) {
        retry = setTimeout(() => {
          retry = null;
          arm();
        }, RETRY_MS);
        retry.unref();
      }
    });
  };

  // One function for the whole subscription: the client keeps one watch per path and function.
  const watcher = () => {
    if (!stopped) arm();
  };

  const armOnce = async (): Promise<boolean> => {
    try {
      const handle = session.current();
      const until = performance.now() + requestTimeoutMs;
      try {
        await session.run<void>(handle, until, 'watch candidates', (client, done) => client.getChildren(path, watcher, (err) => done(err)));
      } catch (err) {
        if (zkCode(err) !== Exception.NO_NODE) throw err;
        // No election node yet: make it, then watch it (its first candidate is a change too).
        await createNode(handle, until);
        await session.run<void>(handle, until, 'watch candidates', (client, done) => client.getChildren(path, watcher, (e) => done(e)));
      }
      return true;
    } catch {
      // Not armed (no answer in time, or the session went): a session event or the retry arms it.
      return false;
    }
  };

  const unsubscribeSession = session.onEvent(() => {
    if (!stopped) arm();
  });
  arm();

  return () => {
    stopped = true;
    unsubscribeSession();
    if (retry) clearTimeout(retry);
    retry = null;
  };
}

