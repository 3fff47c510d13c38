import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspaceManifests } from '@conclave/test-harness/tools';

/**
 * What a user gets from the registry: the packed packages installed in a scratch project beside
 * the current OpenTelemetry SDK, ioredis and mysql2, a TypeScript program compiled under strict
 * settings (no skipLibCheck), then run against the shared Redis and MariaDB. Needs the packages
 * built (`tsc --build`) and the registry or npm's cache.
 */
const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(ROOT, 'scripts', 'consumer');
/** Every published package: the workspaces that are not private (the CLI depends on each backend). */
const PACKAGES = workspaceManifests(ROOT)
  .filter((p) => !p.private)
  .map((p) => p.name);
const FROM_REGISTRY = ['ioredis@latest', 'mysql2@^3', '@opentelemetry/api@^1', '@opentelemetry/sdk-metrics@latest', '@types/node@^20'];

function run(command: string, args: string[], cwd: string, timeout = 120_000): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

describe('a consumer of the packed packages', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'conclave-consumer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('installs, compiles strictly, runs on Redis and MySQL, and its metrics arrive', () => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    run(npm, ['pack', '--silent', '--pack-destination', dir, ...PACKAGES.flatMap((p) => ['-w', p])], ROOT);
    const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(PACKAGES.length);

    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    for (const file of ['consumer.ts', 'wrong-options.ts', 'tsconfig.json']) copyFileSync(join(FIXTURE, file), join(dir, file));
    // npm's cache first: after the first run this needs no network for what it already has.
    run(
      npm,
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', ...tarballs.map((t) => `./${t}`), ...FROM_REGISTRY],
      dir,
      240_000,
    );
    // One copy of the API, shared with the SDK: a second one would drop every conclave metric.
    const apiCopies = run(npm, ['ls', '--all', '--parseable', '@opentelemetry/api'], dir)
      .split('\n')
      .filter((line) => line.endsWith('@opentelemetry/api'));
    expect(apiCopies).toHaveLength(1);

    // The repository's compiler; the wrong options file fails this if any of its lines compiles.
    run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir], dir);

    const output = run(process.execPath, [join(dir, 'dist', 'consumer.js')], dir, 60_000);
    const result = JSON.parse(output.trim().split('\n').pop()!) as { tokens: number[]; metrics: string[] };
    expect(result.tokens.every((t) => Number.isSafeInteger(t) && t > 0)).toBe(true);
    expect(result.metrics).toEqual(expect.arrayContaining(['conclave.transitions', 'conclave.backend.call.duration']));

    // The command, from the installed package's bin.
    const version = run(process.execPath, [join(dir, 'node_modules', '@conclave', 'cli', 'dist', 'main.js'), '--version'], dir);
    expect(version.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, 360_000);
});
