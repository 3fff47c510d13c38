import { execFile } from 'node:child_process';
import { join } from 'node:path';

/**
 * `npm run docs` builds the API reference with TypeDoc from typedoc.json, which turns every
 * warning (an undocumented export, a broken link) into an error. Both runs here skip the HTML
 * (`--emit none`): validation happens before it.
 */
const ROOT = join(__dirname, '..', '..');
const FIXTURE = join('scripts', 'test', 'fixtures', 'docs');

function typedoc(args: string[]): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    const bin = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
    execFile(process.execPath, [bin, '--emit', 'none', ...args], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ exitCode: err ? Number((err as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

test('the API reference builds with no warning: every exported symbol of the packages is documented', async () => {
  const { exitCode, output } = await typedoc([]);
  expect(output).not.toMatch(/warning|error/i);
  expect(exitCode).toBe(0);
}, 120_000);

test('the docs build fails on an undocumented export (typedoc.json treats warnings as errors)', async () => {
  // The fixture's typedoc.json extends the real one, with an entry point that has an undocumented export.
  const { exitCode, output } = await typedoc(['--options', join(FIXTURE, 'typedoc.json')]);
  expect(output).toMatch(/undocumented.*does not have any documentation/);
  expect(exitCode).not.toBe(0);
}, 120_000);
