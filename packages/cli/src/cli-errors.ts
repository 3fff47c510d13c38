import { isConclaveError } from '@conclave/core';
import { redactText } from '@conclave/core/spi';

/** Exit codes of the `conclave` command (documented in the README and `--help`). */
export const EXIT = {
  /** Done; or stopped by SIGINT/SIGTERM after a clean shutdown. */
  OK: 0,
  /** Backend error: the server could not be reached, answered with an error, or timed out. */
  BACKEND: 1,
  /** Usage or configuration error: bad flags, missing arguments, invalid URL, name or option. */
  USAGE: 2,
  /**
   * `run --once`: another candidate leads, so CMD did not run here (75 is EX_TEMPFAIL in
   * sysexits.h: try again later).
   */
  NOT_ELECTED: 75,
  /** `run`: CMD could not be executed (permission denied, not executable). */
  CANNOT_EXECUTE: 126,
  /** `run`: CMD was not found. */
  NOT_FOUND: 127,
  /** A second SIGINT/SIGTERM while shutting down: exit at once. */
  INTERRUPTED: 130,
} as const;

/** A mistake in how the command was called; exit code 2, message without a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The command whose `--help` the message points to, if any. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** An error that ends a command with its own exit code (CMD not found: 127). */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** The exit code for an error that ended a command. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT.USAGE;
  if (err instanceof ExitError) return err.exitCode;
  if (isConclaveError(err)) {
    switch (err.code) {
      case 'INVALID_OPTIONS':
      case 'INVALID_NAME':
      case 'INVALID_URL':
      case 'NOT_SUPPORTED':
      case 'DRIVER_MISSING':
        return EXIT.USAGE;
      default:
        return EXIT.BACKEND;
    }
  }
  return EXIT.BACKEND;
}

/** One line, no stack: what `conclave: …` prints for an error. */
export function errorLine(err: unknown): string {
  let message: string;
  if (err instanceof UsageError) {
    message = err.message + (err.command ? ` (see: conclave ${err.command} --help)` : ' (see: conclave --help)');
  } else if (err instanceof Error) {
    message = err.message;
  } else {
    message = String(err);
  }
  // Every message already hides passwords; this catches a URL quoted by a driver or a wrapper.
  return `conclave: ${redactText(message.replace(/\s*\n\s*/g, ' ').trim())}`;
}
