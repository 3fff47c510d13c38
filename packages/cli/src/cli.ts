import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closestWord } from '@conclave/core/spi';
import { parseCommand, type ParsedCommand } from './cli-args';
import { COMMANDS, isCommand, type CommandName } from './cli-commands';
import { COMMAND_HELP, TOOL_HELP } from './cli-help';
import { EXIT, UsageError, errorLine, exitCodeFor } from './cli-errors';
import { writeLine } from './cli-context';
import { clearCommand, forceCommand, statusCommand } from './commands/admin';
import { watchCommand } from './commands/watch';
import { campaignCommand } from './commands/campaign';
import { migrateCommand } from './commands/migrate';
import { runCommand } from './commands/run';
import { runDemo } from './demo';

/** This package's version, from its package.json. */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

const HANDLERS: Record<CommandName, (parsed: ParsedCommand) => Promise<number>> = {
  campaign: campaignCommand,
  run: runCommand,
  status: statusCommand,
  watch: watchCommand,
  force: forceCommand,
  clear: clearCommand,
  migrate: migrateCommand,
  demo: async (parsed) => {
    await runDemo({ leaseMs: parsed.leaseMs });
    return EXIT.OK;
  },
};

function unknownCommand(name: string): string {
  const guess = closestWord(name, COMMANDS);
  return `unknown command "${name}"${guess ? `; did you mean ${guess}?` : ''}`;
}

/**
 * The `conclave` command: parses `args` (process.argv without node and the script), runs the
 * command and resolves with the exit code. Errors become one line on stderr.
 */
export async function runCli(args: string[]): Promise<number> {
  try {
    const [first, ...rest] = args;
    if (first === undefined) {
      process.stderr.write(TOOL_HELP);
      return EXIT.USAGE;
    }
    if (first === '--help' || first === '-h') {
      process.stdout.write(TOOL_HELP);
      return EXIT.OK;
    }
    if (first === '--version' || first === '-v') {
      writeLine(cliVersion());
      return EXIT.OK;
    }
    if (first === 'help') {
      const topic = rest[0];
      if (topic === undefined) process.stdout.write(TOOL_HELP);
      else if (isCommand(topic)) process.stdout.write(COMMAND_HELP[topic]);
      else throw new UsageError(unknownCommand(topic));
      return EXIT.OK;
    }
    if (!isCommand(first)) {
      throw new UsageError(first.startsWith('-') ? `unknown option ${first}: a command comes first` : unknownCommand(first));
    }
    const parsed = parseCommand(first, rest);
    if (parsed.help) {
      process.stdout.write(COMMAND_HELP[first]);
      return EXIT.OK;
    }
    return await HANDLERS[first](parsed);
  } catch (err) {
    process.stderr.write(`${errorLine(err)}\n`);
    return exitCodeFor(err);
  }
}
