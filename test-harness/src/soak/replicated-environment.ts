import { startTcpProxy, type TcpProxy } from '../faults/tcp-proxy';
import type { DurableServer, FailoverKind, FailoverRecord, FaultEnvironmentCore } from './fault-environment';

/** A primary and its asynchronous replica, whose replication connection goes through `link` (a proxy a failover can stall). */
export interface ReplicaPair<S extends DurableServer> {
  primary: S;
  link: TcpProxy;
  replica: S;
}

/** What a store's `replicated` environment does its own way (see `replicatedServerEnvironment`). */
export interface ReplicationSteps<S extends DurableServer> {
  /** Which store, in messages (`MySQL`). */
  readonly store: string;
  /** The failover kinds it stages (see the backend's README for those it is safe under). */
  readonly failoverKinds: readonly FailoverKind[];
  /** The label of the endpoint's server in fault records. */
  readonly label: string;
  /** The backend URL of a candidate connecting through the proxy on `port`. */
  urlFor(port: number): string;
  /** How long after a failover a leader may take to appear, beyond the lease (`FaultEnvironment.recoveryMarginMs`). */
  readonly recoveryMarginMs: number;
  startPrimary(): Promise<S>;
  /** Starts a replica of `primary` replicating through the proxy on `linkPort`; resolves once a failover may start. */
  startReplica(primary: S, linkPort: number): Promise<S>;
  /**
   * A failover of `kind` up to the promotion: the primary killed (its replica caught up or not)
   * or drained; `endpoint` is the proxy candidates connect through.
   */
  stopPrimary(kind: FailoverKind, pair: ReplicaPair<S>, endpoint: TcpProxy): Promise<void>;
  /** Makes the replica a primary that takes writes. */
  promote(replica: S): Promise<void>;
}

/** The `replicated` environment, with what a directed test waits for before it stages a failover. */
export interface ReplicatedEnvironment extends FaultEnvironmentCore {
  /** Resolves once the current primary has a replica ready (after a failover it is rebuilt in the background). */
  replicaReady(): Promise<void>;
}

/**
 * The `replicated` topology of a durable store: a private primary and an asynchronous replica
 * (its replication connection through a proxy, `link`), behind one endpoint (a proxy, as a
 * managed database's DNS name) that candidates reach. A failover stops the primary as `kind`
 * says, promotes the replica and moves the endpoint to it; then, in the background, the new
 * primary gets a new replica for the next failover.
 */
export async function replicatedServerEnvironment<S extends DurableServer>(steps: ReplicationSteps<S>): Promise<ReplicatedEnvironment> {
  /** Every server and proxy started, for close(). */
  const started: Array<DurableServer | TcpProxy> = [];
  let closed = false;
  const withReplica = async (primary: S): Promise<ReplicaPair<S>> => {
    const link = await startTcpProxy({ targetPort: primary.port });
    started.push(link);
    const replica = await steps.startReplica(primary, link.port);
    // A replica that was still being built when the environment closed is stopped here.
    if (closed) await replica.stop();
    else started.push(replica);
    return { primary, link, replica };
  };
  const close = async () => {
    closed = true;
    await Promise.all(started.map((s) => ('stop' in s ? s.stop() : s.close()).catch(() => undefined)));
  };

  let primary = await steps.startPrimary();
  started.push(primary);
  let rebuilding: Promise<ReplicaPair<S>>;
  let endpoint: TcpProxy;
  try {
    rebuilding = Promise.resolve(await withReplica(primary));
    endpoint = await startTcpProxy({ targetPort: primary.port });
    started.push(endpoint);
  } catch (err) {
    await close();
    throw err;
  }

  const failover = async (kind: FailoverKind): Promise<FailoverRecord> => {
    if (!steps.failoverKinds.includes(kind)) throw new Error(`the replicated ${steps.store} environment does not stage a ${kind} failover`);
    const pair = await rebuilding;
    const startedAt = Date.now();
    await steps.stopPrimary(kind, pair, endpoint);
    await steps.promote(pair.replica);
    endpoint.retarget(pair.replica.port);
    endpoint.resume();
    const switchMs = Date.now() - startedAt;
    primary = pair.replica;
    // The old primary and its link are done with; the new primary gets a replica of its own.
    rebuilding = (async () => {
      await Promise.all([pair.link.close(), pair.primary.stop()]);
      return withReplica(pair.replica);
    })();
    // A failed build is reported by the next failover (or close), not as an unhandled rejection.
    rebuilding.catch(() => undefined);
    return { kind, primaryPort: pair.replica.port, switchMs };
  };

  return {
    servers: [
      {
        index: 0,
        port: endpoint.port,
        label: steps.label,
        kill: () => primary.kill(),
        restart: () => primary.restart(),
        pause: () => primary.pause(),
        resume: () => primary.resume(),
      },
    ],
    urlFor: (ports) => steps.urlFor(ports[0]!),
    restartLosesState: false,
    recoveryMarginMs: steps.recoveryMarginMs,
    failover,
    failoverKinds: steps.failoverKinds,
    replicaReady: async () => {
      await rebuilding;
    },
    close: async () => {
      closed = true;
      await rebuilding.catch(() => undefined);
      await close();
    },
  };
}
