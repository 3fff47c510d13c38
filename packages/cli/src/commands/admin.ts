import { ConclaveError } from '@conclave/core';
import { assertCandidateId, assertElectionName, type BackendAdmin, type ElectionBackend } from '@conclave/core/spi';
import type { ParsedCommand } from '../cli-args';
import { EXIT, UsageError } from '../cli-errors';
import { leaderMetadataJson, leaderMetadataLines } from '../leader-metadata';
import { closeQuietly, openContext, warnLine, writeLine, type CommandContext } from '../cli-context';

/** Runs `fn` with a backend built from --backend, validates the names first, always closes it. */
export async function withBackend<T>(parsed: ParsedCommand, fn: (ctx: CommandContext) => Promise<T>): Promise<T> {
  // The generic rules first, before a driver opens a connection; the backend's own rules below.
  assertElectionName(parsed.election);
  if (parsed.leader !== undefined) assertCandidateId(parsed.leader, undefined, parsed.election);
  const ctx = openContext(parsed);
  try {
    assertElectionName(ctx.election, ctx.backend.kind);
    return await fn(ctx);
  } finally {
    await closeQuietly(ctx);
  }
}

/** `conclave status`. */
export function statusCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    const [exists, leader, candidates] = await Promise.all([
      backend.admin ? backend.admin.electionExists(election) : null,
      backend.getLeader(election),
      backend.candidates ? backend.candidates.list(election) : null,
    ]);
    if (parsed.json) {
      writeLine(
        JSON.stringify({ election, exists, leaderId: leader?.candidateId ?? null, token: leader?.token ?? null, ...leaderMetadataJson(leader), candidates }),
      );
    } else {
      writeLine(`election:   ${election}`);
      writeLine(`exists:     ${existsText(exists)}`);
      writeLine(`leader:     ${leader ? leader.candidateId : '(none)'}`);
      writeLine(`token:      ${leader ? leader.token : '-'}`);
      for (const line of leaderMetadataLines(leader, backend, Date.now())) writeLine(line);
      if (candidates) writeLine(`candidates: ${candidates.length > 0 ? candidates.join(', ') : '(none)'}`);
    }
    return EXIT.OK;
  });
}

/** A name never used reads like an election between terms (no leader): say which it is. */
function existsText(exists: boolean | null): string {
  if (exists === null) return 'unknown (the backend cannot tell)';
  return exists ? 'yes' : 'no (never used on this backend: check the name)';
}

/** The backend's admin part, or `NOT_SUPPORTED` naming the backend when it has none. */
function adminOf(backend: ElectionBackend): BackendAdmin {
  if (backend.admin) return backend.admin;
  throw new ConclaveError('NOT_SUPPORTED', `the ${backend.kind} backend has no admin operations (force, clear)`, { backend: backend.kind });
}

/** `conclave force --leader ID`. */
export function forceCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    assertCandidateId(parsed.leader, backend.kind, election);
    const admin = adminOf(backend);
    if (!parsed.allowAbsent) await assertCandidate(backend, election, parsed.leader!);
    const info = await admin.forceLeader(election, parsed.leader, parsed.leaseMs);
    writeLine(`forced: "${election}" is now led by ${info.candidateId} (token ${info.token})`);
    return EXIT.OK;
  });
}

/**
 * Forcing an id that no process campaigns under leaves the election without a working leader for
 * the forced lease: most likely a typo. Refused where the backend lists its candidates; elsewhere
 * it cannot be checked, and a warning says so.
 */
async function assertCandidate(backend: ElectionBackend, election: string, id: string): Promise<void> {
  if (!backend.candidates) {
    warnLine(`${backend.kind} cannot list candidates: whether "${id}" is one could not be checked`);
    return;
  }
  const candidates = await backend.candidates.list(election);
  if (candidates.includes(id)) return;
  const present = candidates.length > 0 ? `its candidates: ${candidates.join(', ')}` : 'it has no candidates';
  throw new UsageError(`"${id}" is not a candidate of "${election}" (${present}); --allow-absent forces it anyway`, 'force');
}

/** `conclave clear`. */
export function clearCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    await adminOf(backend).clearLeader(election);
    writeLine(`cleared: "${election}" has no leader; a new election starts`);
    return EXIT.OK;
  });
}
