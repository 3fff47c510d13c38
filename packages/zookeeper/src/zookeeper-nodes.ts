import { randomBytes } from 'node:crypto';

/**
 * Names of the candidate nodes. One ephemeral-sequential node per candidacy, under the
 * election's node:
 *
 *     <root>/<election>/_c_<guid>-<instance id, %-encoded>-<10-digit sequence>
 *
 * - `_c_<guid>-` is Curator's "protected" prefix: a create whose answer was lost (connection
 *   loss) is found again by its guid on the next campaign instead of being created twice, which
 *   would leave an orphan node ahead of us for the whole session.
 * - The instance id is in the name (and, raw, in the node's data) so that listing the children
 *   tells who is who without reading every node.
 * - The sequence, appended by ZooKeeper, orders the queue: the lowest leads.
 */
export interface CandidateNode {
  /** Child name, without the parent path. */
  name: string;
  guid: string;
  /** The id the node was created for: an instance id (`<candidate id> <nonce>`) or a bare candidate id. */
  candidateId: string;
  /** ZooKeeper's sequence suffix: the position in the queue. */
  sequence: number;
}

const PREFIX = '_c_';
const NODE_NAME = /^_c_([0-9a-f]{32})-(.*)-(\d{10})$/;

/** A fresh guid for the protected prefix. */
export function newGuid(): string {
  return randomBytes(16).toString('hex');
}

/** The path given to `create(…, EPHEMERAL_SEQUENTIAL)`; ZooKeeper appends the sequence. */
export function nodePrefix(electionPath: string, guid: string, candidateId: string): string {
  return `${electionPath}/${PREFIX}${guid}-${encodeId(candidateId)}-`;
}

/** Parses a child name; `null` for nodes this backend did not create (they are ignored). */
export function parseNodeName(name: string): CandidateNode | null {
  const m = NODE_NAME.exec(name);
  if (!m) return null;
  const sequence = Number(m[3]);
  return { name, guid: m[1]!, candidateId: decodeId(m[2]!), sequence };
}

/** The backend's nodes among `children`, in queue order (leader first). */
export function candidateQueue(children: readonly string[]): CandidateNode[] {
  const nodes: CandidateNode[] = [];
  for (const child of children) {
    const node = parseNodeName(child);
    if (node) nodes.push(node);
  }
  return nodes.sort((a, b) => a.sequence - b.sequence);
}

// Ids are printable ASCII: a candidate id, or an instance id (`<candidate id> <nonce>`, see
// `@conclave/core`'s instance-id). '/' cannot appear in a node name and a space is awkward in
// every tool that prints one, so both are %-encoded; '%' is encoded too so that decoding is exact.
// Names written before spaces were encoded never contain '%20' (their '%' was encoded as '%25'),
// so they decode as they always did.
const ENCODED: Record<string, string> = { '%': '%25', '/': '%2F', ' ': '%20' };
const DECODED: Record<string, string> = { '%25': '%', '%2F': '/', '%20': ' ' };

/** The id as it appears in a node name. */
export function encodeId(id: string): string {
  return id.replace(/[%/ ]/g, (ch) => ENCODED[ch]!);
}

/** The id a node name carries; exact inverse of `encodeId`. */
export function decodeId(text: string): string {
  return text.replace(/%(25|2F|20)/g, (code) => DECODED[code]!);
}
