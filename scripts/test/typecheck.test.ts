import { execFile } from 'node:child_process';
import { join } from 'node:path';

/**
 * ts-jest compiles each file alone and checks no types (jest.config.js), so the types of every
 * test file are checked here, by `tsc -p tsconfig.typecheck.json`, in a Jest worker beside the
 * other files rather than before all of them.
 */
const ROOT = join(__dirname, '..', '..');

function typecheck(): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.typecheck.json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ exitCode: err ? Number((err as { code?: unknown }).code ?? 1) : 0, output: `${stdout}${stderr}`.trim() });
    });
  });
}

test('every test file type-checks (tsc -p tsconfig.typecheck.json)', async () => {
  expect(await typecheck()).toEqual({ exitCode: 0, output: '' });
}, 180_000);
