import { consoleLogger, type ElectionBackend, type Logger } from '@conclave/core';
import { createBackend } from './backend-url';
import type { ParsedCommand } from './cli-args';

/**
 * One line on stdout. `process.stdout.write` is synchronous on Linux for files, pipes and
 * terminals, so a line is out before the next event is handled (and before an exit).
 */
export function writeLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** One line on stderr, `conclave: …`. */
export function warnLine(message: string): void {
  process.stderr.write(`conclave: ${message}\n`);
}

export interface CommandContext {
  backend: ElectionBackend;
  election: string;
  logger: Logger;
}

/** Builds the backend from --backend (throws INVALID_URL and option errors before any I/O). */
export function openContext(parsed: ParsedCommand): CommandContext {
  const backend = createBackend(parsed.backend!);
  return { backend, election: parsed.election!, logger: consoleLogger(parsed.logLevel) };
}

/** Closes the backend; a failure to close is logged, not thrown (we are leaving anyway). */
export async function closeQuietly(ctx: CommandContext): Promise<void> {
  try {
    await ctx.backend.close();
  } catch (err) {
    ctx.logger.debug({ election: ctx.election, err }, 'closing the backend failed');
  }
}

/**
 * Calls `onFirst(signal)` on the first SIGINT/SIGTERM and `onSecond(signal)` on any later one.
 * Returns a function that removes the handlers.
 */
export function onShutdownSignals(
  onFirst: (signal: NodeJS.Signals) => void,
  onSecond: (signal: NodeJS.Signals) => void,
): () => void {
  let seen = false;
  const handler = (signal: NodeJS.Signals) => {
    if (seen) onSecond(signal);
    else {
      seen = true;
      onFirst(signal);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
