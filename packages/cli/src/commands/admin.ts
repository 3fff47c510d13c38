import { assertCandidateId, assertElectionName, type LeaderInfo } from '@conclave/core';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ParsedCommand } from '../cli-args';
import { EXIT } from '../cli-errors';
import { closeQuietly, onShutdownSignals, openContext, warnLine, writeLine, type CommandContext } from '../cli-context';

/** Runs `fn` with a backend built from --backend, validates the names first, always closes it. */
async function withBackend<T>(parsed: ParsedCommand, fn: (ctx: CommandContext) => Promise<T>): Promise<T> {
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
    const candidates = backend.capabilities.listCandidates && backend.listCandidates
      ? await backend.listCandidates(election)
      : null;
    if (parsed.json) {
      writeLine(JSON.stringify({ election, leaderId: leader?.candidateId ?? null, token: leader?.token ?? null, candidates }));
    } else {
      writeLine(`election:   ${election}`);
      writeLine(`leader:     ${leader ? leader.candidateId : '(none)'}`);
      writeLine(`token:      ${leader ? leader.token : '-'}`);
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

const DEFAULT_WATCH_INTERVAL_MS = 500;

/**
 * `conclave watch`: reads the leader every --interval-ms and prints each change until
 * SIGINT/SIGTERM. The first read must succeed (else exit 1); later failures are reported once per
 * outage on stderr and retried.
 */
export function watchCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    const intervalMs = parsed.intervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
    const print = (leader: LeaderInfo | null) => {
      if (parsed.json) {
        writeLine(JSON.stringify({ event: 'leader', election, leaderId: leader?.candidateId ?? null, token: leader?.token ?? null }));
      } else {
        const at = new Date().toISOString();
        writeLine(leader ? `${at} "${election}" is led by ${leader.candidateId} (token ${leader.token})` : `${at} "${election}" has no leader`);
      }
    };
    let stop = false;
    const stopped = new AbortController();
    const removeSignals = onShutdownSignals(
      () => {
        stop = true;
        stopped.abort();
      },
      () => process.exit(EXIT.INTERRUPTED),
    );
    try {
      let last = await backend.getLeader(election);
      print(last);
      let failing = false;
      while (!stop) {
        try {
          await sleep(intervalMs, undefined, { signal: stopped.signal });
        } catch {
          break; // aborted by a signal
        }
        let now: LeaderInfo | null;
        try {
          now = await backend.getLeader(election);
        } catch (err) {
          if (!failing) warnLine(`${err instanceof Error ? err.message : String(err)} (retrying every ${intervalMs} ms)`);
          failing = true;
          continue;
        }
        if (failing) warnLine(`backend reachable again`);
        failing = false;
        if (now?.candidateId !== last?.candidateId || now?.token !== last?.token) print(now);
        last = now;
      }
    } finally {
      removeSignals();
    }
    return EXIT.OK;
  });
}
