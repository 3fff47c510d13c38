import { consoleLogger, type ElectionBackend, type Logger } from '@conclave/core';
import { createBackend } from './backend-url';
import type { ParsedCommand } from './cli-args';

/**
 * One line on stdout. `process.stdout.write` is synchronous on Linux for files, pipes and
 * terminals, so a line is out before the next event is handled (and before an exit). Once the
 * reader has gone away, lines are dropped.
 */
export function writeLine(line: string): void {
  if (stdoutClosed) return;
  process.stdout.write(`${line}\n`);
}

/** Signals that shut a command down cleanly; SIGHUP is a closed terminal. */
export const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

let stdoutClosed = false;
const stdoutClosedListeners = new Set<() => void>();

/**
 * The reader of stdout went away (EPIPE: `conclave campaign | head -1`). A running command shuts
 * down as on a first signal — step down, release, exit 0; when none is listening (it is already
 * finishing) there is nothing to do. Never a signal to ourselves: once a command has removed its
 * handlers, that would kill the process (143).
 */
export function noteStdoutClosed(): void {
  if (stdoutClosed) return;
  stdoutClosed = true;
  for (const listener of [...stdoutClosedListeners]) listener();
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
 * Calls `onFirst(signal)` on the first of SHUTDOWN_SIGNALS and `onSecond(signal)` on any later
 * one. A closed stdout counts as a first signal (`SIGPIPE`), never as a second: it is what our own
 * shutdown lines run into. Returns a function that removes the handlers.
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
  const onClosed = () => {
    if (!seen) handler('SIGPIPE');
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, handler);
  stdoutClosedListeners.add(onClosed);
  if (stdoutClosed) queueMicrotask(onClosed);
  return () => {
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, handler);
    stdoutClosedListeners.delete(onClosed);
  };
}
