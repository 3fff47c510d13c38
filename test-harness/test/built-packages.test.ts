import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { isBackendPackage, workspaceManifests } from '@conclave/test-harness/tools';

// The published packages are CommonJS with named exports that Node's ESM loader detects, so
// both `require` and `import` consumers get the same names. Checked on the built output
// (`tsc --build` runs before Jest in `npm test`), in child processes outside Jest's loader.
const ROOT = resolve(__dirname, '../..');
/** The backend packages: those with a `testing` entry, their kit (read from the workspaces, so a new backend is checked too). */
const BACKENDS = workspaceManifests(ROOT).filter(isBackendPackage).map((p) => p.name);

const PACKAGES: Array<[string, string | null]> = [
  ['@conclave/core', 'Elector'],
  ['@conclave/core/spi', 'TickBatcher'],
  ['@conclave/cli', 'runDemo'],
  // Loaded by bench outside Jest: nothing under it may import Jest.
  ['@conclave/test-harness/tools', 'CandidateProcess'],
  // Every backend and its kit, which the harness and the bench load by name.
  ...BACKENDS.flatMap((name): Array<[string, string | null]> => [
    [name, null],
    [`${name}/testing`, null],
  ]),
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
    if (mainExport) expect(required).toContain(mainExport);
    expect(required.length).toBeGreaterThan(0);
    expect(imported).toEqual(required);
  });
});

test("core's main entry keeps what backends share to @conclave/core/spi", () => {
  const names = node(['-e', "console.log(JSON.stringify(Object.keys(require('@conclave/core'))))"]);
  const backendsOnly = [
    'TickBatcher',
    'withTimeout',
    'GridTimers',
    'gridTimers',
    'describeValue',
    'assertCapabilitiesConsistent',
    'assertElectionName',
    'ForwardingBackend',
    'forwardBackend',
    'mayJoinLease',
    'tombstoneGraceMs',
    'FORCE_ATTEMPTS',
  ];
  for (const name of backendsOnly) expect(names).not.toContain(name);
});

// A user installing a backend must not pull in the harness: the main entry of a backend package
// loads nothing from its `testing` entry (whose kit imports @conclave/test-harness).
test('the backend packages are found among the workspaces', () => {
  expect(BACKENDS).toEqual(expect.arrayContaining(['@conclave/mysql', '@conclave/redis', '@conclave/zookeeper', '@conclave/migrate']));
});

test.each(BACKENDS)('%s main entry loads no module under testing/ nor the harness', (name) => {
  const loaded = node([
    '-e',
    `require('${name}'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => /[\\\\/](testing|test-harness)[\\\\/]/.test(f))))`,
  ]);
  expect(loaded).toEqual([]);
});

test("every backend's kit loads by its bare kind, as the soak loads it", () => {
  const kinds = BACKENDS.map((name) => name.replace(/^@conclave\//, ''));
  const loaded = node([
    '-e',
    `const { loadBackendKit } = require('@conclave/test-harness/tools'); Promise.all(${JSON.stringify(kinds)}.map((k) => loadBackendKit(k))).then((kits) => console.log(JSON.stringify(kits.map((k) => k.kind))))`,
  ]);
  expect(loaded).toEqual([...kinds].sort());
});
