import { assertCandidateId, assertElectionName, supports } from '@conclave/core';
import type { ParsedCommand } from '../cli-args';
import { EXIT } from '../cli-errors';
import { leaderMetadataJson, leaderMetadataLines } from '../leader-metadata';
import { closeQuietly, openContext, writeLine, type CommandContext } from '../cli-context';

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
    const leader = await backend.getLeader(election);
    const candidates = supports(backend, 'listCandidates') ? await backend.listCandidates!(election) : null;
    if (parsed.json) {
      writeLine(
        JSON.stringify({ election, leaderId: leader?.candidateId ?? null, token: leader?.token ?? null, ...leaderMetadataJson(leader), candidates }),
      );
    } else {
      writeLine(`election:   ${election}`);
      writeLine(`leader:     ${leader ? leader.candidateId : '(none)'}`);
      writeLine(`token:      ${leader ? leader.token : '-'}`);
      for (const line of leaderMetadataLines(leader, backend.capabilities, Date.now())) writeLine(line);
      if (candidates) writeLine(`candidates: ${candidates.length > 0 ? candidates.join(', ') : '(none)'}`);
    }
    return EXIT.OK;
  });
}

/** `conclave force --leader ID`. */
export function forceCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    assertCandidateId(parsed.leader, backend.kind, election);
    const info = await backend.forceLeader(election, parsed.leader, parsed.leaseMs);
    writeLine(`forced: "${election}" is now led by ${info.candidateId} (token ${info.token})`);
    return EXIT.OK;
  });
}

/** `conclave clear`. */
export function clearCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    await backend.clearLeader(election);
    writeLine(`cleared: "${election}" has no leader; a new election starts`);
    return EXIT.OK;
  });
}
