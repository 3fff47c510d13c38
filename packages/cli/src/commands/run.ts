import type { Elector } from '@conclave/core';
import type { ParsedCommand } from '../cli-args';
import { EXIT, ExitError, UsageError } from '../cli-errors';
import { closeQuietly, onShutdownSignals, openContext, warnLine, type CommandContext } from '../cli-context';
import { SupervisedCommand, exitCodeOf, type CommandOutcome } from '../supervised-command';
import { monotonicMs } from '../supervisor-protocol';
import { createElector, probe } from './campaign';
import { runOnceCommand } from './run-once';
import { findCommand } from '../find-command';

/** Default time between SIGTERM and SIGKILL, ms, when the lease allows it. */
export const DEFAULT_GRACE_MS = 5000;

/**
 * The longest grace period a lease allows. With healthy renewals the deadline the supervisor holds
 * never comes closer than about leaseMs − renewMs − safetyMarginMs (minus a round trip and a
 * heartbeat); the supervisor sends SIGTERM `grace` before the deadline, so a grace period that
 * long would stop CMD during normal operation. Half of that window leaves the other half for slow
 * or failed renewals.
 */
export function maxGraceMs(elector: Pick<Elector, 'options'>): number {
  const { leaseMs, renewMs, safetyMarginMs } = elector.options;
  return graceWithin(leaseMs, renewMs, safetyMarginMs);
}

function graceWithin(leaseMs: number, renewEveryMs: number, safetyMarginMs: number): number {
  return Math.max(1, Math.floor((leaseMs - renewEveryMs - safetyMarginMs) / 2));
}

/**
 * The grace period for the current term: `graceMs`, cut to what the term's own lease allows. A
 * backend may grant less than leaseMs (ZooKeeper: two thirds of its session), and a grace sized
 * on leaseMs would then stop CMD between two healthy renewals.
 */
export function termGraceMs(elector: Pick<Elector, 'options' | 'health'>, graceMs: number): number {
  const { termLeaseMs, renewEveryMs } = elector.health();
  if (termLeaseMs === null || renewEveryMs === null) return graceMs;
  return Math.min(graceMs, graceWithin(termLeaseMs, renewEveryMs, elector.options.safetyMarginMs));
}

/**
 * Starts CMD for one term under a supervisor that holds the term's lease deadline, with the
 * term's fencing token in its environment.
 */
export function startSupervised(elector: Elector, argv: string[], graceMs: number, token: number): SupervisedCommand {
  const [command, ...args] = argv;
  return new SupervisedCommand({
    command,
    args,
    graceMs: termGraceMs(elector, graceMs),
    env: {
      CONCLAVE_ELECTION: elector.election,
      CONCLAVE_ID: elector.candidateId,
      CONCLAVE_TOKEN: String(token),
    },
    deadline: () => {
      const left = elector.health().leaseRemainingMs;
      return elector.isLeader() && left !== null ? monotonicMs() + left : null;
    },
  });
}

/** `conclave run -- CMD`: runs CMD only while this process leads. See COMMAND_HELP.run. */
export async function runCommand(parsed: ParsedCommand): Promise<number> {
  // Before any connection: a CMD that cannot start would otherwise be found out only once elected.
  const problem = findCommand(parsed.argv[0]!);
  if (problem) throw new ExitError(problem.message, problem.exitCode);
  const ctx = openContext(parsed);
  const elector = createElector(ctx, parsed);
  const maxGrace = maxGraceMs(elector);
  if (parsed.graceMs !== undefined && parsed.graceMs > maxGrace) {
    await closeQuietly(ctx);
    throw new UsageError(
      `--grace-ms ${parsed.graceMs} is too long for a ${elector.options.leaseMs} ms lease: at most ${maxGrace} ms ` +
        `(CMD must be dead before the lease can end), or use a longer --lease-ms`,
      'run',
    );
  }
  const graceMs = parsed.graceMs ?? Math.min(DEFAULT_GRACE_MS, maxGrace);
  await probe(ctx);
  if (parsed.once) return runOnceCommand(ctx, elector, parsed, (token) => startSupervised(elector, parsed.argv, graceMs, token));
  return new CommandRunner(ctx, elector, parsed.argv, graceMs).run();
}

class CommandRunner {
  private current: SupervisedCommand | null = null;
  /** Settles when the last CMD is gone; a new term waits for it, so two CMDs never overlap. */
  private previous: Promise<unknown> = Promise.resolve();
  private shuttingDown = false;
  private resolveExit!: (code: number) => void;
  private rejectExit!: (err: unknown) => void;
  private readonly log: { election: string; candidate: string };

  constructor(
    private readonly ctx: CommandContext,
    private readonly elector: Elector,
    private readonly argv: string[],
    private readonly graceMs: number,
  ) {
    this.log = { election: elector.election, candidate: elector.candidateId };
  }

  run(): Promise<number> {
    const exit = new Promise<number>((resolve, reject) => {
      this.resolveExit = resolve;
      this.rejectExit = reject;
    });
    // Not the core's installShutdownHook: it exits once the Electors stopped, while this command
    // has its own exit code to settle. Here CMD is stopped first, then the lease is released.
    const removeSignals = onShutdownSignals(
      (signal) => {
        this.ctx.logger.info({ ...this.log, signal }, 'shutting down: stopping the command, then releasing');
        void this.shutDown(EXIT.OK);
      },
      () => {
        this.current?.kill();
        process.exit(EXIT.INTERRUPTED);
      },
    );
    this.elector.whileLeader(({ token, signal }) => this.term(token, signal));
    // A configuration the server can never serve rejects start(), the Elector stopped and CMD
    // never started: the command ends with that error.
    this.elector.start().catch(async (err: unknown) => {
      removeSignals();
      await closeQuietly(this.ctx);
      this.rejectExit(err);
    });
    return exit;
  }

  /** One term: start CMD, stop it when the term ends, decide what CMD's own exit means. */
  private async term(token: number, signal: AbortSignal): Promise<void> {
    await this.previous;
    if (signal.aborted || this.shuttingDown) return;
    const command = this.argv[0];
    const cmd = startSupervised(this.elector, this.argv, this.graceMs, token);
    this.current = cmd;
    this.previous = cmd.done;
    this.ctx.logger.info({ ...this.log, token, command }, 'elected: starting the command');
    const onAbort = () => {
      this.ctx.logger.info({ ...this.log, token }, 'leadership ended: stopping the command');
      cmd.stop();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const outcome = await cmd.done;
    signal.removeEventListener('abort', onAbort);
    if (this.current === cmd) this.current = null;
    this.afterCommand(outcome, signal.aborted);
  }

  private afterCommand(outcome: CommandOutcome, termEnded: boolean): void {
    if (this.shuttingDown) return;
    switch (outcome.kind) {
      case 'spawn-error': {
        const notFound = outcome.code === 'ENOENT';
        warnLine(`cannot run ${JSON.stringify(this.argv[0])}: ${notFound ? 'command not found' : outcome.message}`);
        void this.shutDown(notFound ? EXIT.NOT_FOUND : EXIT.CANNOT_EXECUTE);
        return;
      }
      case 'supervisor-died':
        this.ctx.logger.error(this.log, 'the supervisor died; its command was killed');
        if (!termEnded) void this.elector.stepDown();
        return;
      case 'exited':
        if (outcome.cause === 'deadline') {
          // The supervisor stopped CMD because the lease was about to run out unrenewed (this
          // process was frozen or the backend slow). Whatever the Elector thinks now, this term's
          // CMD is gone: end the term; a re-election starts CMD again.
          this.ctx.logger.warn(this.log, 'the lease deadline came without a renewal: the command was stopped');
          if (!termEnded) void this.elector.stepDown();
        } else if ((outcome.cause === 'self' || outcome.cause === 'signal') && !termEnded) {
          const code = exitCodeOf(outcome.code, outcome.signal);
          this.ctx.logger.info({ ...this.log, code }, 'the command exited by itself: stepping down');
          void this.shutDown(code);
        }
        return;
    }
  }

  /** Stops CMD (and waits for it), then stops the Elector (release), closes the backend. */
  private async shutDown(code: number): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.current?.stop();
    await this.previous;
    await this.elector.stop();
    await closeQuietly(this.ctx);
    this.resolveExit(code);
  }
}
