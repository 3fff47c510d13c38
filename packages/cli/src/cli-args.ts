import { resolveBackendUrl } from './backend-source';
import type { CommandName, MigrateSubcommand } from './cli-commands';
import { FlagReader, acceptsOption, parseFlags, type LogLevel } from './cli-flags';
import { checkArguments, checkRequiredFlags, takeMigrateSubcommand } from './cli-requirements';

/** Options of one command after parsing; numbers are validated positive integers. */
export interface ParsedCommand {
  command: CommandName;
  help: boolean;
  backend?: string;
  /** `migrate` only: the subcommand (the first argument after `migrate`). */
  subcommand?: MigrateSubcommand;
  /** `migrate` only: the backend URL the election moves from. */
  from?: string;
  /** `migrate` only: the backend URL the election moves to. */
  to?: string;
  election?: string;
  id?: string;
  leaseMs?: number;
  graceMs?: number;
  intervalMs?: number;
  leader?: string;
  /** `force`: force `leader` even when it is not a current candidate. */
  allowAbsent: boolean;
  /** `campaign`, `run`: the value published with the candidacy. */
  value?: string;
  json: boolean;
  logLevel: LogLevel;
  /** `run --once`: run CMD at most once (a scheduled job), with `waitMs` and `holdAtLeastMs`. */
  once: boolean;
  waitMs?: number;
  holdAtLeastMs?: number;
  /** `run` only: CMD and its arguments (everything after `--`). */
  argv: string[];
}

/**
 * Parses the arguments that follow the command name, strictly: unknown options, options of
 * another command, missing values and stray positionals are `UsageError`s. The backend URL is
 * `--backend`, else `--backend-file`'s contents, else `env.CONCLAVE_BACKEND`.
 */
export function parseCommand(command: CommandName, args: string[], env: NodeJS.ProcessEnv = process.env): ParsedCommand {
  // Everything after the first `--` belongs to CMD (run) and is never parsed as our options.
  const dashDash = args.indexOf('--');
  const own = dashDash === -1 ? args : args.slice(0, dashDash);
  const rest = dashDash === -1 ? [] : args.slice(dashDash + 1);

  const { values, positionals } = parseFlags(command, own);
  const flags = new FlagReader(values, command);
  const parsed: ParsedCommand = {
    command,
    help: flags.isSet('help'),
    json: flags.isSet('json'),
    logLevel: 'warn',
    once: flags.isSet('once'),
    allowAbsent: flags.isSet('allow-absent'),
    argv: rest,
  };
  if (parsed.help) return parsed;

  if (command === 'migrate') parsed.subcommand = takeMigrateSubcommand(positionals);
  checkArguments(command, positionals, dashDash === -1 ? null : rest);

  if (acceptsOption(command, 'backend')) {
    parsed.backend = resolveBackendUrl({ flag: flags.string('backend'), file: flags.string('backend-file'), env }, command);
  }
  parsed.from = flags.string('from');
  parsed.to = flags.string('to');
  parsed.election = flags.string('election');
  parsed.id = flags.string('id');
  parsed.leader = flags.string('leader');
  parsed.value = flags.leaderValue();
  parsed.leaseMs = flags.milliseconds('lease-ms');
  parsed.graceMs = flags.milliseconds('grace-ms');
  parsed.intervalMs = flags.milliseconds('interval-ms');
  parsed.waitMs = flags.onceDuration('wait', parsed.once);
  parsed.holdAtLeastMs = flags.onceDuration('hold-at-least', parsed.once);
  const level = flags.logLevel();
  if (level !== undefined) parsed.logLevel = level;

  checkRequiredFlags(parsed);
  return parsed;
}
