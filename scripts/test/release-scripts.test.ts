import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The two scripts of a release (docs/releasing.md): one version everywhere, and the staged published form. */
const { setVersion } = require('../set-version.cjs') as { setVersion(version: string, root?: string): string[] };
const { publishedManifest, stagePackages } = require('../stage-packages.cjs') as {
  publishedManifest(manifest: object, version: string): Record<string, unknown>;
  stagePackages(out: string, root?: string): string[];
};
const ROOT = join(__dirname, '..', '..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'conclave-release-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, json: object): void {
  mkdirSync(join(dir, file, '..'), { recursive: true });
  writeFileSync(join(dir, file), `${JSON.stringify(json, null, 2)}\n`);
}
const read = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, Record<string, string> | string>;

describe('set-version', () => {
  test('sets the version of the root and every workspace, and every @conclave range to ^version; other ranges stay', () => {
    write('package.json', { name: 'root', version: '0.1.0', workspaces: ['packages/*'], devDependencies: { jest: '^30.0.0' } });
    write('packages/core/package.json', { name: '@conclave/core', version: '0.1.0', dependencies: { rxjs: '^7.8.2' } });
    write('packages/mysql/package.json', {
      name: '@conclave/mysql',
      version: '0.1.0',
      dependencies: { '@conclave/sql-lease': '^0.1.0' },
      peerDependencies: { '@conclave/core': '^0.1.0', mysql2: '^3.0.0' },
      devDependencies: { '@conclave/test-harness': '^0.1.0' },
    });
    expect(setVersion('0.2.0', dir).sort()).toEqual(['package.json', 'packages/core/package.json', 'packages/mysql/package.json']);
    expect(read('package.json')).toMatchObject({ version: '0.2.0', devDependencies: { jest: '^30.0.0' } });
    expect(read('packages/core/package.json')).toMatchObject({ version: '0.2.0', dependencies: { rxjs: '^7.8.2' } });
    expect(read('packages/mysql/package.json')).toEqual({
      name: '@conclave/mysql',
      version: '0.2.0',
      dependencies: { '@conclave/sql-lease': '^0.2.0' },
      peerDependencies: { '@conclave/core': '^0.2.0', mysql2: '^3.0.0' },
      devDependencies: { '@conclave/test-harness': '^0.2.0' },
    });
  });

  test('refuses what is not a version, changing nothing', () => {
    write('package.json', { name: 'root', version: '0.1.0', workspaces: [] });
    expect(() => setVersion('v0.2', dir)).toThrow(/not a version/);
    expect(read('package.json').version).toBe('0.1.0');
  });
});

describe('stage-packages', () => {
  test('the published manifest has no test kit entry, no dev dependencies or scripts, and @conclave ranges at the release version', () => {
    const published = publishedManifest(
      {
        name: '@conclave/redis',
        version: '0.3.0',
        exports: { '.': './dist/index.js', './testing': './dist/testing/index.js', './package.json': './package.json' },
        scripts: { prepack: 'node refuse.cjs' },
        peerDependencies: { '@conclave/core': '^0.1.0', ioredis: '^5.0.0 || ^6.0.0' },
        devDependencies: { '@conclave/test-harness': '^0.1.0' },
      },
      '0.3.0',
    );
    expect(published).toEqual({
      name: '@conclave/redis',
      version: '0.3.0',
      exports: { '.': './dist/index.js', './package.json': './package.json' },
      peerDependencies: { '@conclave/core': '^0.3.0', ioredis: '^5.0.0 || ^6.0.0' },
    });
  });

  test("stages every published workspace of the repository, built, without its tests, and with the published manifest", () => {
    const staged = stagePackages(dir, ROOT);
    expect(staged.map((d) => d.slice(dir.length + 1)).sort()).toEqual(['cli', 'core', 'etcd', 'migrate', 'mysql', 'postgres', 'redis', 'sql-lease', 'zookeeper']);
    for (const folder of staged) {
      expect(readdirSync(folder)).toEqual(expect.arrayContaining(['package.json', 'dist', 'README.md', 'LICENSE']));
      expect(existsSync(join(folder, 'test'))).toBe(false);
      expect(existsSync(join(folder, 'node_modules'))).toBe(false);
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { exports: object; scripts?: object; devDependencies?: object };
      expect(Object.keys(manifest.exports)).not.toContain('./testing');
      expect(manifest.scripts).toBeUndefined();
      expect(manifest.devDependencies).toBeUndefined();
    }
  });
});
