import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { workspaceManifests } from '@conclave/test-harness/tools';

// Plain CommonJS (they run before tsc), so they come in untyped.
const workspaces = require('../workspaces.cjs');
const prepare = require('../prepare-test-env.cjs');

const ROOT = resolve(__dirname, '../..');

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

describe('workspaces.cjs', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'conclave-workspaces-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function writePackage(dir: string, manifest: object, files: Record<string, string> = {}): void {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'package.json'), JSON.stringify(manifest));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(root, dir, file, '..'), { recursive: true });
      writeFileSync(join(root, dir, file), text);
    }
  }

  test('a dir/* pattern is every folder under it with a package.json, in name order; a plain one is itself', () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/*', 'harness'] }));
    writePackage('packages/zeta', { name: 'zeta' });
    writePackage('packages/alpha', { name: 'alpha' });
    mkdirSync(join(root, 'packages', 'no-manifest'));
    writePackage('harness', { name: 'harness' });
    expect(workspaces.workspaceDirs(root)).toEqual(['packages/alpha', 'packages/zeta', 'harness']);
  });

  test('a pattern it cannot expand is refused, not read as a folder', () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/**'] }));
    expect(() => workspaces.workspaceDirs(root)).toThrow(/only "dir" and "dir\/\*"/);
  });

  test('a package marked inProgress is in progress unless CONCLAVE_IN_PROGRESS=1', () => {
    const marked = { name: 'x', conclave: { inProgress: 'the fault tests' } };
    expect(workspaces.isInProgress(marked, {})).toBe(true);
    expect(workspaces.isInProgress(marked, { CONCLAVE_IN_PROGRESS: '1' })).toBe(false);
    expect(workspaces.isInProgress({ name: 'y' }, {})).toBe(false);
  });

  test("prepare-test-env reads each workspace's test/prerequisites.cjs, leaving out a package in progress", () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/*'] }));
    const declares = (name: string) => `module.exports = { services: [{ name: '${name}' }] };`;
    writePackage('packages/done', { name: 'done' }, { 'test/prerequisites.cjs': declares('done') });
    writePackage('packages/silent', { name: 'silent' });
    writePackage('packages/wip', { name: 'wip', conclave: { inProgress: 'yes' } }, { 'test/prerequisites.cjs': declares('wip') });
    const names = (env: object) => prepare.loadPrerequisites(root, env).flatMap((p: { services: Array<{ name: string }> }) => p.services.map((s) => s.name));
    expect(names({})).toEqual(['done']);
    expect(names({ CONCLAVE_IN_PROGRESS: '1' })).toEqual(['done', 'wip']);
  });
});

test("prepare-test-env's requirements and services are those every workspace of the repository declares", () => {
  const declared = (workspaces.workspacePackages(ROOT) as Array<{ dir: string; manifest: object }>)
    .filter(({ manifest }) => !workspaces.isInProgress(manifest))
    .map(({ dir }) => join(ROOT, dir, 'test', 'prerequisites.cjs'))
    .filter((file) => existsSync(file))
    .map((file) => require(file));
  expect(declared.length).toBeGreaterThanOrEqual(5);
  expect(prepare.REQUIREMENTS).toEqual(declared.flatMap((d) => d.requirements ?? []));
  expect(prepare.SERVICES).toEqual(declared.flatMap((d) => d.services ?? []));
});

describe('what a backend package still registers outside its folder', () => {
  const manifests = workspaceManifests(ROOT);

  test("the root tsconfig.json references every workspace's tsconfig.json (tsc --build cannot glob), and the bench's", () => {
    const dirs: string[] = workspaces.workspaceDirs(ROOT);
    const expected = [...dirs.filter((dir) => existsSync(join(ROOT, dir, 'tsconfig.json'))), 'bench'].sort();
    const referenced = readJson<{ references: Array<{ path: string }> }>(join(ROOT, 'tsconfig.json')).references.map((r) => r.path).sort();
    // A new package's line: { "path": "packages/<name>" }.
    expect(referenced).toEqual(expected);
  });

  test('the command depends on every published backend package and takes their drivers as optional peers, none as a dependency', () => {
    type PeerMeta = { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    const cli = readJson<PeerMeta & { dependencies: Record<string, string>; peerDependencies?: Record<string, string> }>(join(ROOT, 'packages', 'cli', 'package.json'));
    const backends = manifests.filter((m) => m.conclave?.backend !== undefined && !m.private && !m.conclave.inProgress);
    const driversOf = (m: (typeof backends)[number]) => Object.keys(m.peerDependencies ?? {}).filter((peer) => !peer.startsWith('@conclave/') && !peer.startsWith('@types/'));
    expect(backends.map((m) => m.name)).toContain('@conclave/redis');
    expect(backends.map((m) => m.name).filter((name) => cli.dependencies[name] === undefined)).toEqual([]);
    const drivers = [...new Set(backends.flatMap(driversOf))];
    expect(drivers).toEqual(expect.arrayContaining(['mysql2', 'ioredis', 'etcd3']));
    // A driver the command depended on would be installed with it; one it did not declare would go unchecked.
    expect(drivers.filter((d) => cli.dependencies[d] !== undefined)).toEqual([]);
    expect(drivers.filter((d) => cli.peerDependencies?.[d] === undefined || cli.peerDependenciesMeta?.[d]?.optional !== true)).toEqual([]);
    // npm installs a dependency's required peers: a backend's driver must be optional there too.
    const required = backends.flatMap((m) => driversOf(m).filter((d) => (m as PeerMeta).peerDependenciesMeta?.[d]?.optional !== true).map((d) => `${m.name}: ${d}`));
    expect(required).toEqual([]);
  });
});

