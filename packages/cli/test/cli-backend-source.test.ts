import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommand } from '../src/cli-args';
import { TOOL_HELP } from '../src/cli-help';
import { assertBuilt, expectOneErrorLine, runConclave } from './cli-process';

/**
 * The backend URL without the command line: `--backend-file PATH` and `CONCLAVE_BACKEND`, with
 * `--backend` > `--backend-file` > `CONCLAVE_BACKEND`. Each source is given a URL of a scheme
 * nobody knows and a name of its own, so the error line tells which one was used.
 */

beforeAll(assertBuilt);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'conclave-backend-file-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, contents: string): string {
  const path = join(dir, name);
  writeFileSync(path, contents, { mode: 0o600 });
  return path;
}

const status = (...args: string[]) => ['status', '--election', 'backend-source', ...args];

describe('conclave: where the backend URL comes from', () => {
  test('CONCLAVE_BACKEND alone is used: status on memory: exits 0', async () => {
    const r = await runConclave(status('--json'), 30_000, { CONCLAVE_BACKEND: 'memory:' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expect.objectContaining({ leaderId: null }));
  });

  test('--backend-file with a trailing newline is used: status on memory: exits 0', async () => {
    const r = await runConclave(status('--backend-file', file('memory.url', 'memory:\n')));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  test('--backend-file wins over CONCLAVE_BACKEND, and --backend over both', async () => {
    const env = { CONCLAVE_BACKEND: 'env-scheme://u:envsecret@h' };
    const fromFile = file('file.url', 'file-scheme://u:filesecret@h\n');
    const fileOverEnv = await runConclave(status('--backend-file', fromFile), 30_000, env);
    expect(fileOverEnv.code).toBe(2);
    expect(expectOneErrorLine(fileOverEnv)).toMatch(/unknown backend URL "file-scheme:\/\/u:\*\*\*@h"/);

    const flagOverAll = await runConclave(status('--backend', 'memory:', '--backend-file', fromFile), 30_000, env);
    expect(flagOverAll.code).toBe(0);
    expect(flagOverAll.stderr + flagOverAll.stdout).not.toMatch(/filesecret|envsecret/);
  });

  test('a missing, an empty and a two-line --backend-file: exit 2 naming the path, never the contents', async () => {
    const missing = join(dir, 'no-such.url');
    const empty = file('empty.url', '\n');
    const twoLines = file('two.url', 'redis://:linesecret@h\nmemory:\n');
    for (const [path, why] of [
      [missing, /no such file/],
      [empty, /is empty/],
      [twoLines, /must hold one line/],
    ] as const) {
      const r = await runConclave(status('--backend-file', path), 30_000, { CONCLAVE_BACKEND: 'memory:' });
      expect(r.code).toBe(2);
      const line = expectOneErrorLine(r);
      expect(line).toContain(path);
      expect(line).toMatch(why);
      expect(line).not.toContain('linesecret');
    }
  });

  test('no source at all: a usage error naming all three (parsed in-process)', () => {
    expect(() => parseCommand('status', ['--election', 'backend-source'], {})).toThrow(
      /needs --backend URL \(or --backend-file PATH, or CONCLAVE_BACKEND/,
    );
  });

  test('--help states the order of precedence', () => {
    expect(TOOL_HELP).toMatch(/--backend URL\s+>\s+--backend-file PATH[^]*>\s+CONCLAVE_BACKEND/);
  });
});
