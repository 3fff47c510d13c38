import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { EXIT } from './cli-errors';

export type CommandProblem = { exitCode: number; message: string };

/** Whether `path` is a file this process may execute. */
function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks that CMD can be started, as the shell would find it: a name with a `/` is a path; any
 * other name is looked up in `PATH` (an executable file in one of its directories; an empty entry
 * is the current directory). Returns the problem — 127 not found, 126 found but not executable,
 * as a shell says — or `null`. No process is started.
 */
export function findCommand(command: string, path = process.env.PATH ?? ''): CommandProblem | null {
  const cannot = (exitCode: number, why: string) => ({ exitCode, message: `cannot run ${JSON.stringify(command)}: ${why}` });
  if (command.includes('/')) {
    let stat;
    try {
      stat = statSync(command);
    } catch {
      return cannot(EXIT.NOT_FOUND, 'no such file');
    }
    if (stat.isDirectory()) return cannot(EXIT.CANNOT_EXECUTE, 'it is a directory');
    return isExecutableFile(command) ? null : cannot(EXIT.CANNOT_EXECUTE, 'permission denied (not executable)');
  }
  const dirs = path.split(delimiter);
  if (dirs.some((dir) => isExecutableFile(join(dir === '' ? '.' : dir, command)))) return null;
  return cannot(EXIT.NOT_FOUND, 'command not found (no executable file of that name in PATH)');
}
