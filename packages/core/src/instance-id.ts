import { randomBytes } from 'node:crypto';
import { ConclaveError } from './errors';
import { MAX_CANDIDATE_ID_LENGTH, assertCandidateId } from './validation';

/**
 * Instance identities: what an `Elector` holds a lease under.
 *
 * Candidate ids are chosen by users (host names, pod names) and can be duplicated: a pod
 * restarted under the same name while the old one still hangs. If the lease were held under the
 * bare id, the second process's campaign would "join" the first one's term (the SPI's rule for a
 * campaign whose answer was lost) and both would lead with one token. So each Elector campaigns
 * as `<candidate id> <nonce>`: the space cannot occur in a candidate id (printable ASCII without
 * spaces), so the two parts always split back exactly, and a backend stores and compares the
 * whole string as it stores any id. Only admin answers (`getLeader`, `listCandidates`) show the
 * candidate id alone.
 */
const SEPARATOR = ' ';
const NONCE = /^[0-9a-z]{1,32}$/;
/** Length of the nonce `newInstanceId` appends. */
export const INSTANCE_NONCE_LENGTH = 12;
/** Longest instance id a backend must store: a candidate id, a space and a nonce. */
export const MAX_INSTANCE_ID_LENGTH = MAX_CANDIDATE_ID_LENGTH + 1 + 32;

/** A fresh instance id for `candidateId` (already validated). */
export function newInstanceId(candidateId: string): string {
  return `${candidateId}${SEPARATOR}${freshNonce()}`;
}

/**
 * The nonce this process gives its next Elector of each candidate id, with the elections it has
 * already been given in. Electors of one candidate in different elections share a nonce, so a
 * backend that batches one statement per holder sends one for all of them (a process leading
 * 10 000 elections as one candidate). Within one election a nonce is never given twice: the
 * candidate's nonce is replaced by a fresh one first, so two Electors of one process, or an
 * Elector and the one that replaced it, never hold a term under the same identity.
 */
const sharedNonces = new Map<string, { nonce: string; elections: Set<string> }>();
/** A nonce is replaced after this many elections, so the set it keeps stays small. */
const ELECTIONS_PER_NONCE = 10_000;

function freshNonce(): string {
  return randomBytes(INSTANCE_NONCE_LENGTH / 2).toString('hex');
}

/**
 * The instance id an `Elector` of `candidateId` (already validated) campaigns under in
 * `election`: unique to that Elector within the election, shared with this process's Electors
 * of the same candidate in other elections (see `sharedNonces`).
 */
export function instanceIdFor(candidateId: string, election: string): string {
  let shared = sharedNonces.get(candidateId);
  if (!shared || shared.elections.has(election) || shared.elections.size >= ELECTIONS_PER_NONCE) {
    shared = { nonce: freshNonce(), elections: new Set() };
    sharedNonces.set(candidateId, shared);
  }
  shared.elections.add(election);
  return `${candidateId}${SEPARATOR}${shared.nonce}`;
}

/** The candidate id part of an instance id; a bare candidate id is returned as it is. */
export function candidateOf(id: string): string {
  const at = id.indexOf(SEPARATOR);
  return at < 0 ? id : id.slice(0, at);
}

/** Same as `candidateOf`, passing `null` through. */
export function candidateOfNullable(id: string | null): string | null {
  return id === null ? null : candidateOf(id);
}

/**
 * Whether a lease held under `holder` may be taken over in place, same term, by the instance
 * `instanceId`: the holder is that very instance (an earlier answer was lost), or the bare
 * candidate id of that instance (a lease `forceLeader` gave to the candidate, which the first
 * of its instances to campaign adopts).
 */
export function mayJoinLease(holder: string, instanceId: string): boolean {
  return holder === instanceId || holder === candidateOf(instanceId);
}

/**
 * Throws `INVALID_NAME` unless `id` is a candidate id, or a candidate id followed by a space and
 * a nonce of 1–32 lowercase letters or digits. Backends call it on the ids of campaign, renew,
 * release, watch and isWatching; admin calls (`forceLeader`) take plain candidate ids.
 */
export function assertInstanceId(id: unknown, backend?: string, election?: string): asserts id is string {
  if (typeof id === 'string') {
    const at = id.indexOf(SEPARATOR);
    if (at >= 0) {
      assertCandidateId(id.slice(0, at), backend, election);
      if (!NONCE.test(id.slice(at + 1))) {
        throw new ConclaveError('INVALID_NAME', 'an instance nonce must be 1–32 lowercase letters or digits', {
          backend,
          election,
        });
      }
      return;
    }
  }
  assertCandidateId(id, backend, election);
}
