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
 * - The instance id is in the name (and, raw, on the first line of the node's data) so that listing the children
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

// Fences. forceLeader and clearLeader delete the nodes ahead of the candidate that should lead;
// the deleted leader learns it at its next renewal, and until its deadline it may still believe
// it leads. So the same transaction creates a fence, a persistent-sequential node
// `<root>/<election>/_f_<10-digit sequence>` (ignored by `candidateQueue`) whose data is how long,
// in ms, a deleted node's holder may still lead: the longest lease its node records.
// A head that finds fences leads only once that long has passed, on its own clock, since it first
// saw each of them, and deletes them in the transaction that confirms it is head.

const FENCE_PREFIX = '_f_';
const FENCE_NAME = /^_f_\d{10}$/;

/** The path given to `create(…, PERSISTENT_SEQUENTIAL)` for a fence. */
export function fencePrefix(electionPath: string): string {
  return `${electionPath}/${FENCE_PREFIX}`;
}

/** The fences among `children`. */
export function fenceNames(children: readonly string[]): string[] {
  return children.filter((child) => FENCE_NAME.test(child)).sort();
}

/**
 * A candidate node's data: its id, then, on a second line, the longest lease its holder is ever
 * granted on it, ms (what a fence must wait if the node is deleted under a leader), then, on a
 * third line, the token offset of its term (see `termToken`; left out, or empty, when 0), then,
 * only when the candidate published one, `=` and its value (which may hold newlines) to the end.
 */
export function nodeData(candidateId: string, maxLeaseMs: number, offset = 0, value?: string): Buffer {
  return Buffer.from(joinData(candidateId, String(Math.ceil(maxLeaseMs)), offset, value));
}

function joinData(id: string, lease: string, offset: number, value: string | undefined): string {
  const lines = [id, lease];
  if (offset > 0 || value !== undefined) lines.push(offset > 0 ? String(offset) : '');
  if (value !== undefined) lines.push(`=${value}`);
  return lines.join('\n');
}

/** The value a node's data records; undefined when its candidate published none. */
export function valueOf(data: Buffer | null | undefined): string | undefined {
  if (!data) return undefined;
  const lines = data.toString('utf8').split('\n');
  if (lines.length < 4) return undefined;
  const rest = lines.slice(3).join('\n');
  return rest.startsWith('=') ? rest.slice(1) : undefined;
}

/** The longest lease recorded in a node's data; null for nodes written before it was recorded. */
export function maxLeaseOf(data: Buffer | null | undefined): number | null {
  const line = lineOf(data, 1);
  if (line === null) return null;
  const n = Number(line);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The token offset a node's data records; 0 when it records none. */
export function offsetOf(data: Buffer | null | undefined): number {
  return parseOffset(lineOf(data, 2));
}

/** The same node data (value included) with `offset` recorded as its term's token offset. */
export function withOffset(data: Buffer | null | undefined, offset: number): Buffer {
  const text = data ? data.toString('utf8') : '';
  const [id = '', lease = ''] = text.split('\n');
  return Buffer.from(joinData(id, lease, offset, valueOf(data)));
}

// The token floor. An election's token is its leading node's czxid plus an offset. The offset is
// kept, in decimal, as the data of the election node itself (empty: 0, so elections that never
// had their floor raised keep czxid tokens); `raiseTokenFloor` only ever raises it, with a
// version-checked write. A head reads it in the round that confirms it, records it on its node
// (third line of the data) and confirms with a `check` of the election node's version, so a raise
// that resolved before the confirmation is never missed, and a running term keeps its token.

/** A token offset as stored (election node data, or a node's third line); 0 when absent or unreadable. */
export function parseOffset(text: string | null | undefined): number {
  if (!text) return 0;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

function lineOf(data: Buffer | null | undefined, index: number): string | null {
  if (!data) return null;
  const lines = data.toString('utf8').split('\n');
  return index < lines.length ? lines[index]! : null;
}

/** A fence's wait, ms; a fence whose data cannot be read waits `fallbackMs`. */
export function fenceWaitOf(data: Buffer | null | undefined, fallbackMs: number): number {
  const n = data ? Number(data.toString('utf8')) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : fallbackMs;
}
