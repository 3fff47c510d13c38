import type { LeaderInfo } from './backend';
import { ConclaveError } from './errors';

/**
 * Revocation of a lease by an admin (`clearLeader`, `forceLeader`), shared by the lease-row
 * backends.
 *
 * A revoked lease is replaced by a *tombstone*: a lease held by nobody, with the revoked term's
 * token, that lives on the server at least until the revoked lease would have ended. The old
 * holder's renewals are refused (the holder no longer matches), so it learns at its next renewal;
 * campaigns see a live lease held by nobody and stay followers until it ends. Since an Elector's
 * deadline always falls before its lease's end on the server, nobody can lead in a new term while
 * the old holder may still believe it leads.
 *
 * The tombstone's holder is a space followed by the number of ms the tombstone outlives the
 * revoked lease (its grace): candidate ids contain no space, so no candidate or instance id can be
 * it, and every admin can tell when the revoked lease ends (`expiry − grace`) whoever wrote it.
 * `clearLeader` writes a grace of 0; `forceLeader` a grace of about a request timeout, so that its
 * second step normally finds the tombstone still there, while an admin that crashed in between
 * delays the election by that grace at most.
 */
export function tombstoneHolder(graceMs: number): string {
  return ` ${Math.max(0, Math.ceil(graceMs))}`;
}

/** Whether a lease holder is a tombstone (see `tombstoneHolder`). */
export function isTombstone(holder: string | null | undefined): holder is string {
  return typeof holder === 'string' && holder.startsWith(' ');
}

/** How long a tombstone outlives the lease it revoked, ms. */
export function tombstoneGraceMs(holder: string): number {
  const n = Number(holder.slice(1));
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** While a tombstone outlives its revoked lease, followers look again this often, ms. */
export const TOMBSTONE_POLL_MS = 50;

/**
 * When a follower that found a tombstone with `remainingMs` left on the server should look again:
 * when the revoked lease ends (a forced term may be installed from then on), then every
 * TOMBSTONE_POLL_MS until the tombstone itself ends.
 */
export function tombstoneLookAgainMs(holder: string, remainingMs: number): number {
  const toEnd = remainingMs - tombstoneGraceMs(holder);
  return toEnd > 0 ? toEnd : Math.min(Math.max(0, remainingMs), TOMBSTONE_POLL_MS);
}

/** The outcome of the first step of `forceLeader`. */
export type Revocation =
  /** No live lease, tombstones aside: step 2 may install the new term at once. */
  | { kind: 'free' }
  /** The forced candidate already holds the lease: it keeps leading, in its term. */
  | { kind: 'held'; leader: LeaderInfo }
  /** A lease was revoked (now, or earlier by another admin): it ends in `waitMs` on the server. */
  | { kind: 'revoked'; waitMs: number };

/** How many times `forceLeader` revokes again when another candidate took the lease meanwhile. */
export const FORCE_ATTEMPTS = 5;

/**
 * `forceLeader` in two steps: `revoke` (tombstone the live lease, learn when it ends), wait that
 * long on this process's monotonic clock counted from the reply (the server counted from before
 * it answered, so this errs long), then `install` the new term, which the backend does only if
 * the lease is free or a tombstone whose revoked lease has ended (it answers null otherwise: a
 * candidate took the lease legitimately meanwhile, so revoke again).
 */
export async function forceAfterRevocation(args: {
  kind: string;
  election: string;
  revoke: () => Promise<Revocation>;
  install: () => Promise<LeaderInfo | null>;
}): Promise<LeaderInfo> {
  for (let attempt = 0; attempt < FORCE_ATTEMPTS; attempt++) {
    const revocation = await args.revoke();
    if (revocation.kind === 'held') return revocation.leader;
    // +1: the server's clock counts whole ms.
    if (revocation.kind === 'revoked' && revocation.waitMs > 0) await sleep(Math.ceil(revocation.waitMs) + 1);
    const installed = await args.install();
    if (installed) return installed;
  }
  throw new ConclaveError(
    'BACKEND_UNAVAILABLE',
    `forceLeader: the lease kept changing hands (${FORCE_ATTEMPTS} attempts); try again`,
    { backend: args.kind, election: args.election },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
