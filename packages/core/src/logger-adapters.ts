import type { Logger } from './logger';
import { redactText } from './redact-url';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** What conclave calls on a winston logger: `logger.warn(message, meta)`. */
export interface WinstonLike {
  /** Logs at debug level. */
  debug(message: string, meta: object): unknown;
  /** Logs at info level. */
  info(message: string, meta: object): unknown;
  /** Logs at warn level. */
  warn(message: string, meta: object): unknown;
  /** Logs at error level. */
  error(message: string, meta: object): unknown;
}

/** What conclave calls on a bunyan logger: `logger.warn(fields, message)`, as on pino. */
export interface BunyanLike {
  /** Logs at debug level. */
  debug(fields: object, message: string): unknown;
  /** Logs at info level. */
  info(fields: object, message: string): unknown;
  /** Logs at warn level. */
  warn(fields: object, message: string): unknown;
  /** Logs at error level. */
  error(fields: object, message: string): unknown;
}

/** An Error as a plain object (pino's `err` shape: type, message, stack, own fields), passwords masked. */
export function plainError(err: Error): Record<string, unknown> {
  const plain: Record<string, unknown> = { type: err.name, message: redactText(err.message) };
  for (const [key, value] of Object.entries(err)) plain[key] = value instanceof Error ? plainError(value) : value;
  if (err.stack !== undefined) plain.stack = redactText(err.stack);
  if (err.cause instanceof Error) plain.cause = plainError(err.cause);
  return plain;
}

// Error values become plain objects, which every JSON formatter keeps; an Error's message and
// stack are not enumerable, so `JSON.stringify` (winston, bunyan without serializers) drops them.
function withPlainErrors(context: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) out[key] = value instanceof Error ? plainError(value) : value;
  return out;
}

/**
 * A conclave `Logger` that writes to a winston logger. winston takes `(message, meta)`, the other
 * way round from pino, and its JSON format drops an Error's message; this puts the message first
 * and the error as a plain object (`err: { type, message, stack }`) in meta.
 */
export function fromWinston(logger: WinstonLike): Logger {
  const at = (level: (typeof LEVELS)[number]) => (context: object, message: string) =>
    void logger[level](message, withPlainErrors(context));
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * A conclave `Logger` that writes to a bunyan logger created without `serializers`: bunyan takes
 * `(fields, message)` like pino, but without its `stdSerializers` an Error in a field is written
 * as `{}`. A bunyan logger made with `serializers: bunyan.stdSerializers` fits as it is.
 */
export function fromBunyan(logger: BunyanLike): Logger {
  const at = (level: (typeof LEVELS)[number]) => (context: object, message: string) =>
    void logger[level](withPlainErrors(context), message);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
