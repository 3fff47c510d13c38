import { Elector, installShutdownHook } from '@conclave/core';
import type { ParsedCommand } from '../cli-args';
import { EXIT } from '../cli-errors';
import { inFlagTerms } from '../lease-flag';
import { SHUTDOWN_SIGNALS, closeQuietly, onShutdownSignals, openContext, writeLine, type CommandContext } from '../cli-context';

/** The JSON line `campaign --json` prints for each transition (documented in packages/cli/README.md). */
export interface CampaignEvent {
  /** `leader`: the leader this candidate sees changed; `elected`/`revoked`: this candidate's term started/ended; `stopped`: the process is about to exit after a signal. */
  event: 'elected' | 'revoked' | 'leader' | 'stopped';
  /** The election's name. */
  election: string;
  /** This candidate's id. */
  id: string;
  /** The leader (on `revoked`, the new one), as far as this candidate can see; `null` when none is known. */
  leaderId: string | null;
  /** The leader's token; on `revoked`, the token of the term that ended; `null` when not known. */
  token: number | null;
  /** `acquired` on `elected`; why the term ended on `revoked` (`stepped-down`, `lease-lost`, …); the signal on `stopped`; `null` on `leader`. */
  reason: string | null;
}

/** Builds the Elector for `campaign` and `run`; on a bad option closes the backend and throws. */
export function createElector(ctx: CommandContext, parsed: ParsedCommand): Elector {
  try {
    return new Elector({
      backend: ctx.backend,
      election: ctx.election,
      candidateId: parsed.id,
      leaseMs: parsed.leaseMs,
      value: parsed.value,
      logger: ctx.logger,
    });
  } catch (err) {
    void closeQuietly(ctx);
    throw inFlagTerms(err, parsed.leaseMs, ctx.backend, ctx.election, parsed.command);
  }
}

/**
 * One round trip before campaigning, so that an unreachable server or a name the backend rejects
 * is reported as an error at start-up (exit 1 or 2) instead of being retried forever. Once
 * running, the Elector rides out outages.
 */
export async function probe(ctx: CommandContext): Promise<void> {
  try {
    await ctx.backend.getLeader(ctx.election);
  } catch (err) {
    await closeQuietly(ctx);
    throw err;
  }
}

function textLine(e: CampaignEvent): string {
  const at = new Date().toISOString();
  switch (e.event) {
    case 'elected':
      return `${at} elected: ${e.id} leads "${e.election}" (token ${e.token})`;
    case 'revoked':
      return `${at} revoked: ${e.id} no longer leads "${e.election}" (${e.reason})`;
    case 'leader':
      return e.leaderId === null
        ? `${at} leader: "${e.election}" has no leader that ${e.id} knows of`
        : `${at} leader: "${e.election}" is led by ${e.leaderId}${e.token === null ? '' : ` (token ${e.token})`}`;
    case 'stopped':
      return `${at} stopped: ${e.id} left "${e.election}"${e.reason ? ` (${e.reason})` : ''}`;
  }
}

/** `conclave campaign`: campaigns until SIGINT/SIGTERM, printing each transition. */
export async function campaignCommand(parsed: ParsedCommand): Promise<number> {
  const ctx = openContext(parsed);
  const elector = createElector(ctx, parsed);
  await probe(ctx);

  let stopping = false;
  const emit = (event: CampaignEvent['event'], leaderId: string | null, token: number | null, reason: string | null) => {
    const e: CampaignEvent = { event, election: elector.election, id: elector.candidateId, leaderId, token, reason };
    writeLine(parsed.json ? JSON.stringify(e) : textLine(e));
  };

  // state$ replays its current value ('stopped', nobody) first: only later changes are news.
  let lastLeader: string | null = null;
  let lastToken: number | null = null;
  const subscriptions = [
    elector.state$.subscribe((s) => {
      if (stopping || s.role === 'stopped') return;
      // A change of leader; or a new term of the same leader (both tokens known and different).
      // A token that turns unknown (null) for the same leader is no news.
      if (s.leaderId === lastLeader && (s.token === null || lastToken === null || s.token === lastToken)) {
        if (s.token !== null) lastToken = s.token;
        return;
      }
      lastLeader = s.leaderId;
      lastToken = s.token;
      emit('leader', s.leaderId, s.token, null);
    }),
    elector.elected$.subscribe((e) => emit('elected', elector.candidateId, e.token, e.reason)),
    // The Elector publishes its new state (the new leader, when known) before revoked$.
    elector.revoked$.subscribe((e) => emit('revoked', elector.state.leaderId, e.token, e.reason)),
  ];

  return new Promise<number>((resolve, reject) => {
    // Our handler is registered first, so it sees the signal before the core's hook stops the
    // Elector (step down + release); we wait for that same stop, report it, close the backend and
    // let the process end. The hook's timeout exits anyway if the release hangs.
    const removeSignals = onShutdownSignals(
      (signal) => {
        stopping = true; // no 'leader' lines for the stop itself; 'revoked' (stopped) and 'stopped' tell it
        void elector.stop().then(async () => {
          emit('stopped', null, null, signal);
          for (const s of subscriptions) s.unsubscribe();
          removeHook();
          await closeQuietly(ctx);
          removeSignals();
          resolve(EXIT.OK);
        });
      },
      () => process.exit(EXIT.INTERRUPTED),
    );
    const removeHook = installShutdownHook(elector, { signals: SHUTDOWN_SIGNALS, exit: false, timeoutMs: 10_000 });
    // A configuration the server can never serve (BACKEND_AUTH, BACKEND_MISCONFIGURED) rejects
    // start(), the Elector stopped: the command ends with that error instead of campaigning on.
    elector.start().catch(async (err: unknown) => {
      for (const s of subscriptions) s.unsubscribe();
      removeHook();
      removeSignals();
      await closeQuietly(ctx);
      reject(err);
    });
  });
}
