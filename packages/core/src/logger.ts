import { redactText } from './redact-url';

/**
 * A pino-shaped logger: `logger.warn({ election, candidate, backend, err }, 'message')`, where
 * `err` is the Error itself. A pino logger fits as it is, and so does a bunyan logger made with
 * `serializers: bunyan.stdSerializers`; wrap a winston logger with `fromWinston`, and a bunyan
 * logger without serializers with `fromBunyan`, or they lose the message or the error.
 */
export interface Logger {
  /** Logs an entry at debug level; `context` names the election, candidate and backend, and `err` when there is one. */
  debug(context: object, message: string): void;
  /** Logs an entry at info level (same `context`). */
  info(context: object, message: string): void;
  /** Logs an entry at warn level (same `context`): failures, on the first and then at powers of two. */
  warn(context: object, message: string): void;
  /** Logs an entry at error level (same `context`). */
  error(context: object, message: string): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/** Logs nothing. The default unless `CONCLAVE_LOG` is set. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One line per entry on stderr, from `minLevel` up: `level election=… candidate=… message`. */
export function consoleLogger(minLevel: Level = 'info'): Logger {
  const min = LEVELS.indexOf(minLevel);
  const write = (level: Level) => (context: object, message: string) => {
    if (LEVELS.indexOf(level) < min) return;
    const fields = Object.entries(context)
      .map(([k, v]) => `${k}=${v instanceof Error ? JSON.stringify(v.message) : typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    // A URL quoted by a driver's error still shows no password.
    process.stderr.write(redactText(`conclave ${level} ${message}${fields ? ` ${fields}` : ''}`) + '\n');
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** The logger used when none is given: `CONCLAVE_LOG=debug|info|warn|error` turns on console logging. */
export function defaultLogger(): Logger {
  const level = process.env.CONCLAVE_LOG as Level | undefined;
  return level && LEVELS.includes(level) ? consoleLogger(level) : silentLogger;
}
