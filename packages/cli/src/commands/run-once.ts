import { isConclaveError, type Elector, type LeadershipState } from '@conclave/core';
import type { ParsedCommand } from '../cli-args';
import { EXIT } from '../cli-errors';
import { closeQuietly, onShutdownSignals, warnLine, type CommandContext } from '../cli-context';
import { exitCodeOf, type CommandOutcome, type SupervisedCommand } from '../supervised-command';

/**
 * `conclave run --once -- CMD`: a scheduled job fired on several hosts, run by one. Campaigns for
 * up to --wait; if elected, runs CMD once under the supervisor (stopped if the lease is lost),
 * keeps the lease until --hold-at-least after CMD started, releases and exits with CMD's code.
 * Not elected: exits NOT_ELECTED. The Elector's runOnce does the campaign, the hold and the release.
 */
export async function runOnceCommand(
  ctx: CommandContext,
  elector: Elector,
  parsed: ParsedCommand,
  start: (token: number) => SupervisedCommand,
): Promise<number> {
  const log = { election: elector.election, candidate: elector.candidateId };
  // Who leads as the lost campaign saw it, for the line that says why CMD did not run here.
  let seen: Pick<LeadershipState, 'leaderId' | 'token'> | null = null;
  const following = elector.state$.subscribe((state) => {
    if (state.role === 'follower') seen = { leaderId: state.leaderId, token: state.token };
  });
  const shutdown = new AbortController();
  let current: SupervisedCommand | null = null;
  const removeSignals = onShutdownSignals(
    (signal) => {
      // Stops CMD through the task's signal, skips the hold; runOnce then releases.
      ctx.logger.info({ ...log, signal }, 'shutting down: stopping the command, then releasing');
      shutdown.abort(signal);
    },
    () => {
      current?.kill();
      process.exit(EXIT.INTERRUPTED);
    },
  );
  try {
    const outcome = await elector.runOnce(
      async ({ token, signal }): Promise<CommandOutcome> => {
        const cmd = start(token);
        current = cmd;
        ctx.logger.info({ ...log, token, command: parsed.argv[0] }, 'elected: running the command once');
        const onAbort = () => cmd.stop();
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          return await cmd.done;
        } finally {
          signal.removeEventListener('abort', onAbort);
          current = null;
        }
      },
      { waitMs: parsed.waitMs ?? 0, holdAtLeastMs: parsed.holdAtLeastMs ?? 0, signal: shutdown.signal },
    );
    if (!outcome.ran) {
      warnLine(notElectedLine(elector.election, seen));
      return EXIT.NOT_ELECTED;
    }
    return exitCodeFor(outcome.result, parsed.argv[0]);
  } catch (err) {
    // A signal before the election: nothing ran, the campaign was given up cleanly.
    if (isConclaveError(err, 'ABORTED')) return EXIT.OK;
    throw err;
  } finally {
    following.unsubscribe();
    removeSignals();
    await closeQuietly(ctx);
  }
}

function notElectedLine(election: string, seen: Pick<LeadershipState, 'leaderId' | 'token'> | null): string {
  const who = seen?.leaderId
    ? `${seen.leaderId} leads "${election}"${seen.token === null ? '' : ` (token ${seen.token})`}`
    : `nobody leads "${election}" now`;
  return `not elected: ${who}; the command did not run here`;
}

function exitCodeFor(outcome: CommandOutcome, command: string): number {
  switch (outcome.kind) {
    case 'exited':
      return exitCodeOf(outcome.code, outcome.signal);
    case 'spawn-error': {
      const notFound = outcome.code === 'ENOENT';
      warnLine(`cannot run ${JSON.stringify(command)}: ${notFound ? 'command not found' : outcome.message}`);
      return notFound ? EXIT.NOT_FOUND : EXIT.CANNOT_EXECUTE;
    }
    case 'supervisor-died':
      warnLine('the supervisor died; the command was killed');
      return EXIT.BACKEND;
  }
}
