import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

// The published packages are CommonJS with named exports that Node's ESM loader detects, so
// both `require` and `import` consumers get the same names. Checked on the built output
// (`tsc --build` runs before Jest in `npm test`), in child processes outside Jest's loader.
const ROOT = resolve(__dirname, '../..');
const PACKAGES: Array<[string, string]> = [
  ['@conclave/core', 'Elector'],
  ['@conclave/core/internal', 'TickBatcher'],
  ['@conclave/mysql', 'MysqlBackend'],
  ['@conclave/redis', 'RedisBackend'],
  ['@conclave/zookeeper', 'ZookeeperBackend'],
  ['@conclave/cli', 'runDemo'],
  // The backends' kits and launchers, which the harness and the bench load by name.
  ['@conclave/mysql/testing', 'mysqlKit'],
  ['@conclave/redis/testing', 'redisKit'],
  ['@conclave/zookeeper/testing', 'zookeeperKit'],
  ['@conclave/migrate/testing', 'migrateKit'],
  // Loaded by bench outside Jest: nothing under it may import Jest.
  ['@conclave/test-harness/tools', 'CandidateProcess'],
];

function node(args: string[]): string[] {
  const out = execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as string[]).sort();
}

describe.each(PACKAGES)('%s loads from its build', (name, mainExport) => {
  test('with require() and with import, exposing the same names', () => {
    const required = node(['-e', `console.log(JSON.stringify(Object.keys(require('${name}')).filter((k) => k !== '__esModule')))`]);
    const imported = node([
      '--input-type=module',
      '-e',
      `import * as m from '${name}'; console.log(JSON.stringify(Object.keys(m).filter((k) => !['default', 'module.exports', '__esModule'].includes(k))))`,
    ]);
    expect(required).toContain(mainExport);
    expect(imported).toEqual(required);
  });
});

test("core's main entry keeps its internals to @conclave/core/internal", () => {
  const names = node(['-e', "console.log(JSON.stringify(Object.keys(require('@conclave/core'))))"]);
  for (const internal of ['TickBatcher', 'withTimeout', 'GridTimers', 'gridTimers', 'describeValue']) {
    expect(names).not.toContain(internal);
  }
});

// A user installing a backend must not pull in the harness: the main entry of a backend package
// loads nothing from its `testing` entry (whose kit imports @conclave/test-harness).
test.each(['@conclave/mysql', '@conclave/redis', '@conclave/zookeeper', '@conclave/migrate'])('%s main entry loads no module under testing/ nor the harness', (name) => {
  const loaded = node([
    '-e',
    `require('${name}'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /[\\\\/](testing|test-harness)[\\\\/]/.test(f))))`,
  ]);
  expect(loaded).toEqual([]);
});

test('a kit loads by its bare kind, as the soak loads it', () => {
  const kinds = node([
    '-e',
    "const { loadBackendKit } = require('@conclave/test-harness/tools'); Promise.all(['mysql', 'redis', 'zookeeper', 'migrate'].map((k) => loadBackendKit(k))).then((kits) => console.log(JSON.stringify(kits.map((k) => k.kind))))",
  ]);
  expect(kinds).toEqual(['migrate', 'mysql', 'redis', 'zookeeper']);
});
