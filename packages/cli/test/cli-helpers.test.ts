import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../src/duration';
import { findCommand } from '../src/find-command';
import { closestWord } from '@conclave/core/spi';
import { parseCommand } from '../src/cli-args';
import { COMMANDS } from '../src/cli-commands';
import { BACKEND_PROVIDERS } from '../src/backend-providers';
import { COMMAND_HELP, TOOL_HELP } from '../src/cli-help';
import { openContext } from '../src/cli-context';
import { createElector } from '../src/commands/campaign';

/** The CLI's small parsers and lookups, in-process: no server, no child process. */

describe('parseDuration', () => {
  test.each([
    ['0', 0],
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h', 3_600_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ms });
  });

  test.each([
    ['30', /needs a unit, as in 30s or 30ms/],
    ['-1s', /must be a duration/],
    ['1d', /must be a duration/],
    ['s', /must be a duration/],
    ['30 s', /must be a duration/],
    ['600h', /too long/],
  ])('%s is refused: %p', (text, message) => {
    const result = parseDuration(text);
    expect('error' in result && result.error).toMatch(message);
  });
});

describe('closestWord', () => {
  test.each([
    ['statuz', 'status'],
    ['campain', 'campaign'],
    ['wacth', 'watch'],
    ['cam', 'campaign'],
    ['frobnicate', undefined],
    ['x', undefined],
  ])('%s → %p', (typed, meant) => {
    expect(closestWord(typed, COMMANDS)).toBe(meant);
  });
});

describe('findCommand', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'conclave-find-'));
    writeFileSync(join(dir, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(dir, 'plain'), 'not a program\n', { mode: 0o644 });
    chmodSync(join(dir, 'plain'), 0o644);
    mkdirSync(join(dir, 'folder'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('an executable file in PATH, or a path to one, is found', () => {
    expect(findCommand('tool', `/nonexistent:${dir}`)).toBeNull();
    expect(findCommand(join(dir, 'tool'), '')).toBeNull();
  });

  test('a name with no executable file in PATH is 127, even when a non-executable one is there', () => {
    expect(findCommand('no-such-tool', dir)).toMatchObject({ exitCode: 127, message: expect.stringMatching(/command not found/) });
    expect(findCommand('plain', dir)).toMatchObject({ exitCode: 127 });
    expect(findCommand('folder', dir)).toMatchObject({ exitCode: 127 });
  });

  test('a path: missing is 127; a directory or a file without execute permission is 126', () => {
    expect(findCommand(join(dir, 'missing'), '')).toMatchObject({ exitCode: 127, message: expect.stringMatching(/no such file/) });
    expect(findCommand(join(dir, 'folder'), '')).toMatchObject({ exitCode: 126, message: expect.stringMatching(/directory/) });
    expect(findCommand(join(dir, 'plain'), '')).toMatchObject({ exitCode: 126, message: expect.stringMatching(/not executable/) });
  });
});

describe('--value', () => {
  test.each(['campaign', 'run'] as const)('%s --value reaches the Elector as its published value', (command) => {
    const tail = command === 'run' ? ['--', 'true'] : [];
    const parsed = parseCommand(command, ['--backend', 'memory:', '--election', 'e', '--value', 'http://10.0.0.7:8080', ...tail]);
    expect(parsed.value).toBe('http://10.0.0.7:8080');
    const elector = createElector(openContext(parsed), parsed);
    expect(elector.options.value).toBe('http://10.0.0.7:8080');
  });
});

describe('help', () => {
  test('the tool help, and every command help that takes a backend, lists every URL form of every registered provider', () => {
    const forms = BACKEND_PROVIDERS.flatMap((p) => p.urlForms ?? []);
    // Every built-in provider describes its URLs, so a new one shows up without editing the help.
    expect(BACKEND_PROVIDERS.filter((p) => !p.urlForms?.length).map((p) => p.kind)).toEqual([]);
    const withBackend = Object.values(COMMAND_HELP).filter((help) => help.includes('--backend URL'));
    expect(withBackend.length).toBeGreaterThan(5);
    for (const help of [TOOL_HELP, ...withBackend]) {
      for (const { form, what } of forms) {
        expect(help).toContain(form);
        expect(help).toContain(what);
      }
    }
  });
});
