import { execFile } from 'node:child_process';
import { copyFileSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEtcd, type EtcdCluster } from '@conclave/etcd/testing';
import { startZookeeperServer, type ZookeeperServer } from '@conclave/zookeeper/testing';

/**
 * What a user gets from the registry: every published package, staged as it is published
 * (scripts/stage-packages.cjs, see docs/releasing.md) and packed, installed in a scratch project
 * under the system's temp directory. First alone, as `npm install @conclave/cli` leaves it: no
 * driver, a small install, and a command that names the driver a backend needs. Then beside the
 * current drivers and the OpenTelemetry API and SDK: a TypeScript program compiled under strict
 * settings (no skipLibCheck), every exported path required, one election per backend (the shared
 * Redis, MariaDB and PostgreSQL; a private ZooKeeper and etcd started as the repository's tests
 * start them), and the command against Redis. Needs the packages built (`tsc --build`) and the
 * registry or npm's cache.
 */
const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(ROOT, 'scripts', 'consumer');
const { stagePackages } = require('../stage-packages.cjs') as { stagePackages(out: string): string[] };

/** The database drivers, none of which the packages install. */
const DRIVERS = ['mysql2', 'pg', 'ioredis', 'etcd3', '@grpc/grpc-js', 'node-zookeeper-client'];
/** What a user installs beside them, at the current versions (npm's cache first). */
const FROM_REGISTRY = [
  'ioredis@latest',
  'mysql2@^3',
  'pg@^8',
  '@types/pg@^8',
  'etcd3@^1',
  'node-zookeeper-client@^1',
  '@types/node-zookeeper-client@^1',
  '@opentelemetry/api@^1',
  '@opentelemetry/sdk-metrics@latest',
  '@types/node@^20',
];
/** The largest install of the command alone, bytes of its files. */
const CLI_INSTALL_LIMIT = 15 * 1024 * 1024;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NODE = process.execPath;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command without blocking the event loop (the servers start meanwhile); never rejects. */
function run(command: string, args: string[], cwd: string, timeout = 120_000): Promise<Ran> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Like `run`, but a failure throws with the command's output. */
async function ok(command: string, args: string[], cwd: string, timeout?: number): Promise<Ran> {
  const ran = await run(command, args, cwd, timeout);
  if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** Bytes of the files under `dir` (links not followed): what an install puts on disk. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

const npmInstall = (dir: string, specs: string[]) =>
  ok(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', ...specs], dir, 300_000);

describe('a consumer of the packed packages', () => {
  let dir: string;
  let tarballs: string[];
  const timings: string[] = [];
  let zookeeper: Promise<ZookeeperServer | Error>;
  let etcd: Promise<EtcdCluster | Error>;
  let withDrivers: Promise<void> | undefined;
  let compiled: Promise<Ran> | undefined;
  const cli = (...args: string[]) => run(NODE, [join(dir, 'node_modules', '@conclave', 'cli', 'dist', 'main.js'), ...args], dir, 30_000);

  beforeAll(async () => {
    // The private servers start while npm works; a server that cannot start skips its election, saying why.
    zookeeper = startZookeeperServer().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    etcd = startEtcd().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    dir = mkdtempSync(join(tmpdir(), 'conclave-consumer-'));
    const staged = stagePackages(join(dir, 'staged'));
    await ok(NPM, ['pack', '--silent', '--pack-destination', dir, ...staged], ROOT);
    tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    for (const file of ['consumer.ts', 'wrong-options.ts', 'exports.cjs', 'tsconfig.json']) copyFileSync(join(FIXTURE, file), join(dir, file));
    const installed = await npmInstall(dir, tarballs.map((t) => `./${t}`));
    timings.push(`install of the packages alone ${(installed.ms / 1000).toFixed(1)} s`);
  }, 360_000);

  afterAll(async () => {
    const servers = await Promise.all([zookeeper, etcd]);
    await Promise.all(servers.map((s) => (s instanceof Error ? undefined : 'close' in s ? s.close() : s.stop())));
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`consumer: ${timings.join('; ')}\n`);
  }, 60_000);

  /** The drivers and the OpenTelemetry SDK added to the install, once, for the tests that need them. */
  function installDrivers(): Promise<void> {
    withDrivers ??= npmInstall(dir, FROM_REGISTRY).then((ran) => void timings.push(`drivers added ${(ran.ms / 1000).toFixed(1)} s`));
    return withDrivers;
  }

  /** The program compiled by the repository's compiler, once (wrong-options.ts fails it if any of its lines compiles). */
  function compile(): Promise<Ran> {
    compiled ??= installDrivers().then(() => run(NODE, [require.resolve('typescript/bin/tsc'), '-p', dir], dir));
    return compiled;
  }

  it('packs every published package, and no tarball holds a test kit', async () => {
    expect(tarballs.map((t) => t.replace(/-\d+\.\d+\.\d+.*$/, '')).sort()).toEqual(
      ['cli', 'core', 'etcd', 'migrate', 'mysql', 'postgres', 'redis', 'sql-lease', 'zookeeper'].map((p) => `conclave-${p}`),
    );
    for (const tarball of tarballs) {
      const listed = (await ok('tar', ['-tzf', join(dir, tarball)], dir)).stdout;
      expect(listed).toMatch(/package\/dist\/index\.js/);
      expect({ tarball, kits: listed.split('\n').filter((f) => /testing/.test(f)) }).toEqual({ tarball, kits: [] });
    }
  });

  it('alone, installs no driver, stays under 15 MB, and the command names the driver a backend needs in one line (exit 2)', async () => {
    const modules = join(dir, 'node_modules');
    const installed = readdirSync(modules).flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : [name]));
    for (const driver of DRIVERS) expect(installed).not.toContain(driver);
    const bytes = bytesUnder(modules);
    timings.push(`their node_modules ${(bytes / 1024 / 1024).toFixed(1)} MB`);
    expect(bytes).toBeLessThan(CLI_INSTALL_LIMIT);

    const version = await cli('--version');
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    timings.push(`conclave --version ${version.ms.toFixed(0)} ms`);
    const needs: Array<[string, string]> = [
      ['mysql://root@127.0.0.1:3306/test', 'npm install mysql2'],
      ['postgres://root@127.0.0.1:5432/test', 'npm install pg'],
      ['redis://127.0.0.1:6379', 'npm install ioredis'],
      ['zookeeper://127.0.0.1:2181', 'npm install node-zookeeper-client'],
      ['etcd://127.0.0.1:2379', 'npm install etcd3 @grpc/grpc-js'],
    ];
    for (const [url, install] of needs) {
      const status = await cli('status', '--backend', url, '--election', 'consumer');
      expect({ url, code: status.code, lines: status.stderr.trim().split('\n').length }).toEqual({ url, code: 2, lines: 1 });
      expect(status.stderr).toContain(install);
    }
  }, 120_000);

  it('beside the drivers, compiles under strict settings without skipLibCheck, with one OpenTelemetry API', async () => {
    // One copy of the API, shared with the SDK: a second one would drop every conclave metric.
    const apiCopies = (await ok(NPM, ['ls', '--all', '--parseable', '@opentelemetry/api'], dir)).stdout
      .split('\n')
      .filter((line) => line.endsWith('@opentelemetry/api'));
    expect(apiCopies).toHaveLength(1);
    const tsc = await compile();
    expect(tsc.stdout + tsc.stderr).toBe('');
    timings.push(`tsc ${(tsc.ms / 1000).toFixed(1)} s`);
  }, 360_000);

  it('requires every exported path of every package, none of them a test kit', async () => {
    await installDrivers();
    const results = JSON.parse((await ok(NODE, [join(dir, 'exports.cjs')], dir)).stdout) as Array<[string, string | null]>;
    const paths = results.map(([request]) => request);
    expect(paths).toEqual(expect.arrayContaining(['@conclave/core', '@conclave/core/spi', '@conclave/cli', '@conclave/etcd', '@conclave/zookeeper']));
    expect(paths.filter((p) => p.endsWith('/testing'))).toEqual([]);
    expect(results.filter(([, error]) => error !== null)).toEqual([]);
  }, 360_000);

  it('runs one election on each backend and its metrics arrive; the command reads the leader on Redis', async () => {
    await installDrivers();
    const [zk, etc] = await Promise.all([zookeeper, etcd]);
    const env: Record<string, string> = {};
    if (zk instanceof Error) process.stdout.write(`consumer: ZooKeeper election skipped: its private server did not start (${zk.message.split('\n')[0]})\n`);
    else env.CONCLAVE_ZOOKEEPER_CONNECT = zk.connect;
    if (etc instanceof Error) process.stdout.write(`consumer: etcd election skipped: its private server did not start (${etc.message.split('\n')[0]})\n`);
    else env.CONCLAVE_ETCD_HOSTS = etc.url.replace(/^etcd:\/\//, '');
    expect((await compile()).code).toBe(0);
    const ran = await new Promise<Ran>((resolve) => {
      const started = performance.now();
      execFile(NODE, [join(dir, 'dist', 'consumer.js')], { cwd: dir, timeout: 90_000, encoding: 'utf8', env: { ...process.env, ...env } }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout, stderr, ms: performance.now() - started }),
      );
    });
    if (ran.code !== 0) throw new Error(`consumer.js failed:\n${ran.stdout}\n${ran.stderr}`);
    const result = JSON.parse(ran.stdout.trim().split('\n').pop()!) as { tokens: Record<string, number>; metrics: string[] };
    timings.push(`elections ${(ran.ms / 1000).toFixed(1)} s`);
    timings.push(`elected on ${Object.keys(result.tokens).sort().join(', ')}`);
    const expected = ['mysql', 'postgres', 'redis', ...(env.CONCLAVE_ZOOKEEPER_CONNECT ? ['zookeeper'] : []), ...(env.CONCLAVE_ETCD_HOSTS ? ['etcd'] : [])];
    expect(Object.keys(result.tokens).sort()).toEqual(expected.sort());
    expect(Object.values(result.tokens).every((t) => Number.isSafeInteger(t) && t > 0)).toBe(true);
    expect(result.metrics).toEqual(expect.arrayContaining(['conclave.transitions', 'conclave.backend.call.duration']));

    const status = await cli('status', '--backend', 'redis://127.0.0.1:6379', '--election', `consumer-status-${process.pid}`);
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
    timings.push(`conclave status on Redis ${status.ms.toFixed(0)} ms`);
  }, 180_000);
});
