import { CreateMode, Exception, type Client, type Stat } from 'node-zookeeper-client';
import { ConclaveError } from '@conclave/core';
import { candidateOf, type LeaderInfo } from '@conclave/core/spi';
import { candidateQueue, fenceNames, offsetOf, valueOf, type CandidateNode } from './zookeeper-nodes';
import { zkCode } from './zookeeper-client-util';
import type { SessionHandle, ZookeeperSession } from './zookeeper-session';

const KIND = 'zookeeper';
/** Rounds of "list, then act" a call makes before giving up on a queue that keeps changing. */
export const MAX_ROUNDS = 8;

/** The election's candidate nodes in queue order, with the names of its fences. */
export type CandidateQueue = CandidateNode[] & { fences: string[]; electionVersion: number };

/** A node's data and stat as read. */
export interface NodeRead {
  data: Buffer | null;
  stat: Stat;
}

/** What a call that gave up after `MAX_ROUNDS` looks throws. */
export function queueKeptChanging(election: string): ConclaveError {
  return new ConclaveError('BACKEND_UNAVAILABLE', 'the candidate queue kept changing; try again', {
    backend: KIND,
    election,
  });
}

/**
 * The nodes of the elections under one root, one request each on the session: the queue, a
 * node's data, existence, deletion and transactions, with the "no node" answers the protocol
 * expects turned into values.
 */
export class ElectionQueue {
  constructor(
    readonly session: ZookeeperSession,
    private readonly root: string,
  ) {}

  path(election: string, child?: string): string {
    return child === undefined ? `${this.root}/${election}` : `${this.root}/${election}/${child}`;
  }

  /**
   * Lease granted, ms from when the request was sent: never more than two thirds of the
   * negotiated session timeout. A session lives at least its timeout after the server last heard
   * from it, but in an ensemble a follower reports client activity to the leader only every half
   * tick, and ticks can be as long as half the timeout; two thirds is also where ZooKeeper's own
   * client gives a silent connection up. Never more than the node records either (`cap`, see
   * `Candidacies.createNode`).
   */
  grant(handle: SessionHandle, leaseMs: number, cap: number | null = null): number {
    const sessionMs = this.session.negotiatedTimeoutMs(handle);
    return Math.max(1, Math.min(leaseMs, Math.floor((sessionMs * 2) / 3), cap ?? Infinity));
  }

  ownedBy(stat: Stat | null, handle: SessionHandle): boolean {
    return stat !== null && Buffer.from(stat.ephemeralOwner).equals(handle.client.getSessionId());
  }

  /**
   * The election's candidate nodes in queue order, with the names of its fences; creates the
   * election node when missing. A missing chroot is created only for a call that writes
   * (`makeChroot`); for a read it means an empty election.
   */
  async list(handle: SessionHandle, election: string, until: number, makeChroot = false): Promise<CandidateQueue> {
    const electionPath = this.path(election);
    try {
      const { children, version } = await this.session.run<{ children: string[]; version: number }>(
        handle,
        until,
        'list candidates',
        (client, done) => client.getChildren(electionPath, (err, list, stat) => done(err, { children: list, version: stat?.version ?? -1 })),
      );
      return Object.assign(candidateQueue(children), { fences: fenceNames(children), electionVersion: version });
    } catch (err) {
      if (zkCode(err) !== Exception.NO_NODE) throw err;
      const empty = Object.assign([] as CandidateNode[], { fences: [] as string[], electionVersion: -1 });
      const mkdirp = () =>
        this.session.run<string>(handle, until, 'create election node', (client, done) =>
          client.mkdirp(electionPath, this.session.acl(), CreateMode.PERSISTENT, (e, p) => done(e, p)),
        );
      try {
        await mkdirp();
      } catch (mkdirpErr) {
        // Even the root cannot be made: the chroot the session lives under does not exist.
        if (zkCode(mkdirpErr) !== Exception.NO_NODE) throw mkdirpErr;
        if (!makeChroot) return empty;
        if (!(await this.session.ensureChroot(until))) {
          // A client passed in: its chroot is out of our reach (a chrooted session cannot
          // create it, and we do not know the servers to open another).
          throw new ConclaveError(
            'BACKEND_MISCONFIGURED',
            'the chroot of the ZooKeeper client passed in does not exist: create it first (a backend given `connect` creates its chroot)',
            { backend: KIND, election, cause: mkdirpErr },
          );
        }
        await mkdirp();
      }
      return empty;
    }
  }

  /** The head of the queue as `getLeader` reports it; null when the queue is empty. */
  async leader(election: string, until: number): Promise<LeaderInfo | null> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const handle = this.session.current();
      const queue = await this.list(handle, election, until);
      const leader = queue[0];
      if (!leader) return null;
      const read = await this.readNode(handle, this.path(election, leader.name), until);
      // The token its node records: the offset of its term once it confirmed (a head that has
      // not yet confirmed records the floor it was created under).
      if (read) return leaderInfo(leader.candidateId, read);
    }
    throw queueKeptChanging(election);
  }

  /**
   * Who is first in the queue now (its full instance id, so that the core can tell another
   * instance of the same candidate from itself), or null when unknown: a best effort after a
   * renewal found our node gone, never an error.
   */
  async headOfQueue(handle: SessionHandle, election: string, until: number): Promise<string | null> {
    if (!this.session.isCurrent(handle)) return null;
    try {
      return (await this.list(handle, election, until))[0]?.candidateId ?? null;
    } catch {
      return null;
    }
  }

  async getData(handle: SessionHandle, path: string, until: number): Promise<Buffer | null> {
    return (await this.readNode(handle, path, until))?.data ?? null;
  }

  /**
   * A node's data and stat; null when it does not exist. With `watcher`, a data watch (it fires
   * when the node is deleted or its data changes; none is left on a node that does not exist).
   */
  async readNode(
    handle: SessionHandle,
    path: string,
    until: number,
    watcher?: (event?: { getPath?: () => string }) => void,
  ): Promise<NodeRead | null> {
    try {
      return await this.session.run<NodeRead>(handle, until, 'read node', (client, done) => {
        const cb = (err: unknown, data: Buffer | undefined, stat: Stat) => done(err, { data: data ?? null, stat });
        if (watcher) client.getData(path, watcher, cb);
        else client.getData(path, cb);
      });
    } catch (err) {
      if (zkCode(err) === Exception.NO_NODE) return null;
      throw err;
    }
  }

  exists(handle: SessionHandle, path: string, until: number, watcher?: () => void): Promise<Stat | null> {
    return this.session.run<Stat | null>(handle, until, 'read candidate node', (client, done) => {
      const cb = (err: unknown, stat: Stat) => done(err, stat ?? null);
      if (watcher) client.exists(path, watcher, cb);
      else client.exists(path, cb);
    });
  }

  /** Deletes a node; a node already gone is not an error. */
  async remove(handle: SessionHandle, path: string, until: number): Promise<void> {
    try {
      await this.session.run<void>(handle, until, 'delete candidate node', (client, done) =>
        client.remove(path, -1, (err) => done(err)),
      );
    } catch (err) {
      if (zkCode(err) !== Exception.NO_NODE) throw err;
    }
  }

  /** Runs a transaction; resolves false when one of its ops found no node (or a bad version). */
  async commit(
    handle: SessionHandle,
    until: number,
    what: string,
    build: (tx: ReturnType<Client['transaction']>) => void,
  ): Promise<boolean> {
    try {
      await this.session.run<unknown>(handle, until, what, (client, done) => {
        const tx = client.transaction();
        build(tx);
        tx.commit((err, results) => done(err, results));
      });
      return true;
    } catch (err) {
      const code = zkCode(err);
      if (code === Exception.NO_NODE || code === Exception.BAD_VERSION) return false;
      throw err;
    }
  }
}

/** A term's token: its node's czxid plus the floor's offset the term started with. */
export function termToken(czxid: number, offset: number): number {
  const token = czxid + offset;
  if (!Number.isSafeInteger(token)) {
    throw new ConclaveError('BACKEND_ERROR', `token ${czxid} + ${offset} is not a safe integer`, { backend: KIND });
  }
  return token;
}

/**
 * The head's `LeaderInfo`. `since` is the node's mtime once its first confirmation wrote it
 * (version > 0, see `Campaigner.confirmHead`): the quorum's clock when the term started. A head
 * not yet confirmed (or confirmed by an earlier build, which did not always write) has no `since`.
 */
function leaderInfo(candidateId: string, read: NodeRead): LeaderInfo {
  const value = valueOf(read.data);
  const since = read.stat.version > 0 ? Number(Buffer.from(read.stat.mtime).readBigInt64BE(0)) : 0;
  return {
    candidateId: candidateOf(candidateId),
    token: termToken(czxid(read.stat), offsetOf(read.data)),
    ...(value === undefined ? {} : { value }),
    ...(since > 0 ? { since } : {}),
  };
}

/**
 * The node's creation zxid as a number. zxid = epoch << 32 | counter: it stays a safe integer
 * while the ensemble has had fewer than 2^21 leader epochs.
 */
export function czxid(stat: Stat): number {
  return zxidOf(stat.czxid, 'czxid');
}

export function zxidOf(zxid: Buffer, what = 'zxid'): number {
  const value = Buffer.from(zxid).readBigInt64BE(0);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new ConclaveError('BACKEND_ERROR', `${what} ${value} cannot be a token (not a positive safe integer)`, {
      backend: KIND,
    });
  }
  return n;
}
