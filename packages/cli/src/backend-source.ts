import { readFileSync } from 'node:fs';
import { UsageError } from './cli-errors';

/** The environment variable that gives the backend URL when no flag does. */
export const BACKEND_ENV = 'CONCLAVE_BACKEND';

/** Where the backend URL may come from, in the order of precedence. */
export interface BackendSources {
  /** `--backend URL`. */
  flag?: string | undefined;
  /** `--backend-file PATH`. */
  file?: string | undefined;
  /** The environment (`CONCLAVE_BACKEND`). */
  env: NodeJS.ProcessEnv;
}

/**
 * The backend URL: `--backend`, else the contents of `--backend-file`, else `CONCLAVE_BACKEND`;
 * undefined when none is given. The two last keep the password out of the command line, where
 * `ps` shows it to every user. A file that cannot be read, is empty or holds more than one line
 * is a `UsageError` naming the path, never quoting the contents.
 */
export function resolveBackendUrl(sources: BackendSources, command: string): string | undefined {
  if (sources.flag !== undefined) return sources.flag;
  if (sources.file !== undefined) return readBackendFile(sources.file, command);
  const fromEnv = sources.env[BACKEND_ENV];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (fromEnv.trim() === '') throw new UsageError(`${BACKEND_ENV} is set but blank`, command);
  return fromEnv.trim();
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
};

function readBackendFile(path: string, command: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    const why = READ_ERRORS[code] ?? code;
    throw new UsageError(`cannot read --backend-file ${JSON.stringify(path)}: ${why}`, command);
  }
  // An editor's or `echo`'s trailing newline (and a Windows \r) is not part of the URL.
  const url = text.replace(/\s+$/, '').replace(/^\s+/, '');
  if (url === '') throw new UsageError(`--backend-file ${JSON.stringify(path)} is empty`, command);
  if (/[\r\n]/.test(url)) throw new UsageError(`--backend-file ${JSON.stringify(path)} must hold one line: the backend URL`, command);
  return url;
}
