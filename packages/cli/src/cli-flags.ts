/**
 * The flags of every command: which ones each command accepts, parsing them strictly, and
 * reading their values, where a bad value is a `UsageError` that names the flag.
 */
import { parseArgs } from 'node:util';
import { MAX_LEADER_VALUE_BYTES } from '@conclave/core/spi';
import type { CommandName } from './cli-commands';
import { UsageError } from './cli-errors';
import { parseDuration } from './duration';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type OptionName =
  | 'backend'
  | 'backend-file'
  | 'from'
  | 'to'
  | 'election'
  | 'id'
  | 'lease-ms'
  | 'json'
  | 'grace-ms'
  | 'interval-ms'
  | 'leader'
  | 'allow-absent'
  | 'log-level'
  | 'once'
  | 'wait'
  | 'hold-at-least'
  | 'value'
  | 'help';

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

const OPTION_SPECS: Record<OptionName, OptionSpec> = {
  backend: { type: 'string' },
  'backend-file': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  election: { type: 'string' },
  id: { type: 'string' },
  'lease-ms': { type: 'string' },
  json: { type: 'boolean' },
  'grace-ms': { type: 'string' },
  'interval-ms': { type: 'string' },
  leader: { type: 'string' },
  'allow-absent': { type: 'boolean' },
  'log-level': { type: 'string' },
  once: { type: 'boolean' },
  wait: { type: 'string' },
  'hold-at-least': { type: 'string' },
  value: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const CONNECTION: OptionName[] = ['backend', 'backend-file', 'election', 'log-level', 'help'];

/** Which options each command accepts; anything else is a usage error. */
const COMMAND_OPTIONS: Record<CommandName, OptionName[]> = {
  campaign: [...CONNECTION, 'id', 'lease-ms', 'value', 'json'],
  run: [...CONNECTION, 'id', 'lease-ms', 'value', 'grace-ms', 'once', 'wait', 'hold-at-least'],
  status: [...CONNECTION, 'json'],
  watch: [...CONNECTION, 'json', 'interval-ms'],
  force: [...CONNECTION, 'leader', 'allow-absent', 'lease-ms'],
  clear: [...CONNECTION],
  migrate: ['from', 'to', 'election', 'json', 'log-level', 'help'],
  demo: ['lease-ms', 'help'],
};

export function acceptsOption(command: CommandName, name: OptionName): boolean {
  return COMMAND_OPTIONS[command].includes(name);
}

/** Flag values as parsed: strings, booleans, or undefined when absent. */
export type FlagValues = Record<string, string | boolean | undefined>;

/** Parses `args` (no `--` among them) strictly: unknown options and missing values are `UsageError`s. */
export function parseFlags(command: CommandName, args: string[]): { values: FlagValues; positionals: string[] } {
  const options: Record<string, OptionSpec> = {};
  for (const name of COMMAND_OPTIONS[command]) options[name] = OPTION_SPECS[name];
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true }) as { values: FlagValues; positionals: string[] };
  } catch (err) {
    throw new UsageError(describeParseError(err, command), command);
  }
}

/** node:util's parse errors, in the words of this tool's other messages. */
function describeParseError(err: unknown, command: CommandName): string {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  const quoted = /'(-[^']*)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) {
    return `unknown option ${quoted} for "${command}"`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted) {
    const name = quoted.split(/[ ,]/)[0];
    const spec = OPTION_SPECS[name.replace(/^--/, '') as OptionName];
    if (spec?.type === 'boolean') return `option ${name} takes no value`;
    return `option ${name} needs a value`;
  }
  return message.split('\n')[0];
}

/** Reads the values of one command's flags; a bad value is a `UsageError` naming its flag. */
export class FlagReader {
  constructor(
    private readonly values: FlagValues,
    private readonly command: CommandName,
  ) {}

  isSet(name: OptionName): boolean {
    return this.values[name] === true;
  }

  /** A string flag; never empty. */
  string(name: OptionName): string | undefined {
    const v = this.values[name];
    if (typeof v !== 'string') return undefined;
    if (v.trim() === '') throw this.usage(`--${name} must not be empty`);
    return v;
  }

  /** A positive whole number of milliseconds. */
  milliseconds(name: OptionName): number | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) <= 0) {
      throw this.usage(`--${name} must be a positive whole number of milliseconds, got "${v}"`);
    }
    return Number(v);
  }

  /** A duration with a unit (see duration.ts), for a flag that goes with `--once`. */
  onceDuration(name: OptionName, once: boolean): number | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!once) throw this.usage(`--${name} goes with --once`);
    const d = parseDuration(v);
    if ('error' in d) throw this.usage(`--${name} ${d.error}, got "${v}"`);
    return d.ms;
  }

  /** `--value`: at most what a backend stores with a candidacy. */
  leaderValue(): string | undefined {
    const value = this.string('value');
    if (value !== undefined && Buffer.byteLength(value) > MAX_LEADER_VALUE_BYTES) {
      throw this.usage(`--value is ${Buffer.byteLength(value)} UTF-8 bytes long; the limit is ${MAX_LEADER_VALUE_BYTES}`);
    }
    return value;
  }

  logLevel(): LogLevel | undefined {
    const level = this.string('log-level');
    if (level === undefined) return undefined;
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      throw this.usage(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
    }
    return level as LogLevel;
  }

  private usage(message: string): UsageError {
    return new UsageError(message, this.command);
  }
}
