/**
 * Peer: ZooKeeper's leader-election recipe with node-zookeeper-client. Each candidate creates
 * an ephemeral-sequential node under the election's path; the lowest node leads; every other
 * candidate watches only its predecessor and looks again when it goes. The session timeout is
 * the lease: a crashed leader's node goes when its session expires. A candidate that loses its
 * connection stops leading until it is connected again (the recipe's usual advice); an expired
 * session starts over with a new one.
 *
 * Keep-alive: an `exists` on its own node every third of the session timeout instead of the
 * client's idle ping (the same rate), so that each server contact is observable and the bench
 * can tell the lease the server still held at a crash.
 *
 * Read timeout: ZooKeeper's own client counts itself disconnected when the server has said
 * nothing for ⅔ of the session timeout; node-zookeeper-client leaves that out (a silent
 * connection would stay "connected" for ever), so the peer applies it to its keep-alives.
 */
import { createClient, CreateMode, Event, State, type Client } from 'node-zookeeper-client';
import { now, runPeer } from './peer-child';

runPeer((config, events) => {
  const url = new URL(config.backend);
  const base = `/bench-peer-elections/${config.election}`;
  let client: Client | null = null;
  let myNode: string | null = null;
  let connected = false;
  let leading = false;
  let stopped = false;
  let keepAlive: NodeJS.Timeout | null = null;
  let heardAt = now();
  let readTimeout: NodeJS.Timeout | null = null;

  const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
    new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

  const setLeading = (on: boolean, reason = '') => {
    if (on && !leading) events.elected();
    if (!on && leading) events.revoked(reason);
    leading = on;
  };

  /** Lowest node leads; otherwise watch the predecessor and look again when it changes. */
  const check = async (c: Client): Promise<void> => {
    if (stopped || c !== client || !myNode) return;
    const children = (await call<string[]>((cb) => c.getChildren(base, cb))).sort();
    const mine = myNode.slice(base.length + 1);
    const at = children.indexOf(mine);
    if (at < 0) {
      setLeading(false, 'node gone');
      return;
    }
    if (at === 0) {
      setLeading(true);
      events.lease(now() + c.getSessionTimeout());
      return;
    }
    const predecessor = `${base}/${children[at - 1]}`;
    const stat = await call<unknown>((cb) =>
      c.exists(
        predecessor,
        (event) => {
          if (event.getType() === Event.NODE_DELETED) void check(c).catch((err: Error) => events.warn(err.message));
        },
        cb,
      ),
    );
    if (!stat) await check(c);
  };

  const open = () =>
    new Promise<void>((resolve, reject) => {
      const c = createClient(`${url.hostname}:${url.port}`, { sessionTimeout: config.leaseMs, retries: 0 });
      client = c;
      let first = true;
      c.on('state', (state) => {
        if (c !== client) return;
        if (state === State.DISCONNECTED) {
          connected = false;
          setLeading(false, 'disconnected');
        } else if (state === State.SYNC_CONNECTED) {
          connected = true;
          heardAt = now();
          if (!first) void check(c).catch((err: Error) => events.warn(err.message));
        } else if (state === State.EXPIRED) {
          connected = false;
          setLeading(false, 'session expired');
          myNode = null;
          c.close();
          if (!stopped) void open().catch((err: Error) => events.warn(`reopen: ${err.message}`));
        }
      });
      c.once('connected', () => {
        void (async () => {
          await call<string>((cb) => c.mkdirp(base, cb));
          myNode = await call<string>((cb) => c.create(`${base}/n_`, Buffer.from(config.candidateId), CreateMode.EPHEMERAL_SEQUENTIAL, cb));
          first = false;
          await check(c);
        })().then(resolve, reject);
      });
      c.connect();
    });

  return {
    async start() {
      await open();
      keepAlive = setInterval(() => {
        const c = client;
        if (!c || !connected || !myNode) return;
        const sentAt = now();
        c.exists(myNode, (err, stat) => {
          if (err || c !== client) return;
          heardAt = now();
          if (!connected) {
            connected = true;
            void check(c).catch((e: Error) => events.warn(e.message));
          }
          if (stat && leading) events.lease(sentAt + c.getSessionTimeout());
        });
      }, Math.floor(config.leaseMs / 3));
      // Local only (no traffic): report the step-down when the read timeout passes.
      readTimeout = setInterval(() => {
        const c = client;
        if (c && connected && now() - heardAt > (c.getSessionTimeout() * 2) / 3) {
          connected = false;
          setLeading(false, 'no answer for 2/3 of the session timeout');
        }
      }, 20);
    },
    isLeader: () => leading && connected && now() - heardAt <= ((client?.getSessionTimeout() ?? config.leaseMs) * 2) / 3,
    async stop() {
      stopped = true;
      if (keepAlive) clearInterval(keepAlive);
      if (readTimeout) clearInterval(readTimeout);
      leading = false;
      // Closing the session deletes the ephemeral node at once; the next candidate's watch fires.
      const c = client;
      client = null;
      if (c) await new Promise<void>((resolve) => {
        c.once('disconnected', () => resolve());
        c.close();
        setTimeout(resolve, 2000).unref();
      });
    },
  };
});
