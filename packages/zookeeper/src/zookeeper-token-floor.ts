import { Exception } from 'node-zookeeper-client';
import { ConclaveError } from '@conclave/core';
import { parseOffset } from './zookeeper-nodes';
import { zkCode } from './zookeeper-client-util';
import { MAX_ROUNDS, czxid, zxidOf, type ElectionQueue } from './zookeeper-queue';
import type { SessionHandle } from './zookeeper-session';

const KIND = 'zookeeper';
/**
 * The highest token floor accepted: tokens are czxid + offset, and half the safe integers leave
 * the czxids (epoch << 32 | counter) room for 2^20 leader epochs above it.
 */
export const MAX_FLOOR = Math.floor(Number.MAX_SAFE_INTEGER / 2);

/** The election's token offset and the election node's version it was read at. */
export interface Floor {
  version: number;
  offset: number;
}

/** The token floor of each election (the data of its election node, see zookeeper-nodes.ts). */
export class TokenFloor {
  /** Election → the token floor last read (see `read`). */
  private readonly floors = new Map<string, Floor>();

  constructor(private readonly queue: ElectionQueue) {}

  /**
   * The election's token offset. `version` is the election node's version the caller's listing
   * saw: when this process already read the floor at that version, no request is made.
   */
  async read(handle: SessionHandle, election: string, version: number, until: number): Promise<Floor> {
    const cached = this.floors.get(election);
    if (cached && cached.version === version) return cached;
    const read = await this.queue.readNode(handle, this.queue.path(election), until);
    // The election node is created before any candidate node, and never deleted.
    const floor = read ? { version: read.stat.version, offset: parseOffset(read.data?.toString('utf8')) } : { version: -1, offset: 0 };
    if (read) this.floors.set(election, floor);
    return floor;
  }

  /**
   * Raises the election's token offset (the data of the election node, see zookeeper-nodes.ts) so
   * that every term confirmed after this resolves gets a token above `token`. Such a term leads on
   * a node that exists now or is created later, so the offset is `token - L + 1`, L being a lower
   * bound of those nodes' czxids: the smallest czxid of the candidate nodes listed after the
   * election node was read, and its pzxid + 1 for the nodes created after that read (every later
   * zxid is greater). The write is checked against the version read, so a concurrent raise makes
   * it look again, and it changes that version, so a head that read the floor before it and
   * confirms after it fails its confirmation and reads the floor again. The offset only grows,
   * so later terms' tokens (later czxid, same or larger offset) still increase. The running term
   * keeps its token (its node records its offset).
   */
  async raise(election: string, token: number, until: number): Promise<void> {
    const electionPath = this.queue.path(election);
    const session = this.queue.session;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const handle = session.current();
      const read = await this.queue.readNode(handle, electionPath, until);
      if (!read) {
        await this.queue.list(handle, election, until, true); // creates the election node
        continue;
      }
      const offset = parseOffset(read.data?.toString('utf8'));
      if (offset >= token) return; // every czxid is at least 1
      const queue = await this.queue.list(handle, election, until);
      const czxids = await Promise.all(
        queue.map(async (n) => {
          const stat = await this.queue.exists(handle, this.queue.path(election, n.name), until);
          return stat ? czxid(stat) : Infinity; // gone: it will never lead
        }),
      );
      const lowest = Math.min(zxidOf(read.stat.pzxid) + 1, ...czxids);
      const wanted = token - lowest + 1;
      if (wanted <= offset) return;
      const written = await session
        .run<void>(handle, until, 'raise token floor', (client, done) =>
          client.setData(electionPath, Buffer.from(String(wanted)), read.stat.version, (err) => done(err)),
        )
        .then(
          () => true,
          (err: unknown) => {
            if (zkCode(err) === Exception.BAD_VERSION || zkCode(err) === Exception.NO_NODE) return false;
            throw err;
          },
        );
      this.floors.delete(election);
      if (written) return;
    }
    throw new ConclaveError('BACKEND_UNAVAILABLE', 'the token floor kept changing; try again', { backend: KIND, election });
  }

  clear(): void {
    this.floors.clear();
  }
}
