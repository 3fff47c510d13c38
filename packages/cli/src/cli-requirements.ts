/**
 * What each command needs besides well-formed flags: its arguments (a subcommand, CMD after
 * `--`) and the flags it cannot do without. Each miss is a `UsageError` saying what to add.
 */
import type { ParsedCommand } from './cli-args';
import { MIGRATE_SUBCOMMANDS, type CommandName, type MigrateSubcommand } from './cli-commands';
import { UsageError } from './cli-errors';
import { BACKEND_ENV } from './backend-source';

/** `migrate`'s subcommand: the first positional, taken off `positionals`. */
export function takeMigrateSubcommand(positionals: string[]): MigrateSubcommand {
  const command = 'migrate';
  const sub = positionals.shift();
  if (sub === undefined) throw new UsageError('"migrate" needs a subcommand, as in: conclave migrate status …', command);
  if (!(MIGRATE_SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw new UsageError(`unknown migrate subcommand "${sub}" (known: ${MIGRATE_SUBCOMMANDS.join(', ')})`, command);
  }
  return sub as MigrateSubcommand;
}

/**
 * No stray positionals; `--` only for `run`, which needs CMD after it. `afterDashDash` is
 * `null` when there was no `--`.
 */
export function checkArguments(command: CommandName, positionals: string[], afterDashDash: string[] | null): void {
  if (positionals.length > 0) {
    const hint = command === 'run' ? ': put the command after "--", as in: conclave run … -- CMD ARGS' : '';
    throw new UsageError(`unexpected argument "${positionals[0]}" for "${command}"${hint}`, command);
  }
  if (afterDashDash !== null && command !== 'run') {
    throw new UsageError(`"${command}" takes no arguments after "--"`, command);
  }
  if (command === 'run' && (afterDashDash ?? []).length === 0) {
    throw new UsageError('"run" needs a command to run after "--", as in: conclave run … -- CMD ARGS', command);
  }
}

/** The flags `parsed.command` cannot do without. */
export function checkRequiredFlags(parsed: ParsedCommand): void {
  const { command } = parsed;
  if (command === 'migrate') {
    if (parsed.from === undefined) throw new UsageError('"migrate status" needs --from URL', command);
    if (parsed.to === undefined) throw new UsageError('"migrate status" needs --to URL', command);
    if (parsed.election === undefined) throw new UsageError('"migrate status" needs --election NAME', command);
  } else if (command !== 'demo') {
    if (parsed.backend === undefined) {
      throw new UsageError(`"${command}" needs --backend URL (or --backend-file PATH, or ${BACKEND_ENV} in the environment)`, command);
    }
    if (parsed.election === undefined) throw new UsageError(`"${command}" needs --election NAME`, command);
  }
  if (command === 'force' && parsed.leader === undefined) {
    throw new UsageError('"force" needs --leader ID', command);
  }
}
