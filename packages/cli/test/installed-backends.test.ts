import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { workspaceManifests } from '@conclave/test-harness/tools';
import { BACKEND_PROVIDERS } from '../src/backend-providers';
import { installedBackendPackages } from '../src/installed-backends';

/** How the command finds its backends: package.json files, no list of its own. */

describe('installedBackendPackages', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'conclave-installed-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function install(nodeModules: string, folder: string, manifest: object): void {
    const dir = join(root, nodeModules, 'node_modules', '@conclave', folder);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  }

  test('declared backends from every node_modules up the tree, the nearest copy first; others and packages in progress left out', () => {
    install('', 'core', { name: '@conclave/core' });
    install('', 'redis', { name: '@conclave/redis', conclave: { backend: 'redis' }, version: 'hoisted' });
    install('', 'etcd', { name: '@conclave/etcd', conclave: { backend: 'etcd' } });
    install('', 'wip', { name: '@conclave/wip', conclave: { backend: 'wip', inProgress: 'its fault tests' } });
    install('app', 'redis', { name: '@conclave/redis', conclave: { backend: 'redis-nested' } });
    mkdirSync(join(root, 'app', 'node_modules', '@conclave', 'empty-folder'));
    const found = installedBackendPackages(join(root, 'app', 'dist'));
    expect(found.map((p) => [p.name, p.kind])).toEqual([
      ['@conclave/etcd', 'etcd'],
      ['@conclave/redis', 'redis-nested'],
    ]);
  });

  test('in name order, a backend built over others after the plain ones', () => {
    install('', 'migrate', { name: '@conclave/migrate', conclave: { backend: 'migrate' }, peerDependencies: { '@conclave/core': '*', '@conclave/mysql': '*' } });
    install('', 'zookeeper', { name: '@conclave/zookeeper', conclave: { backend: 'zookeeper' } });
    install('', 'mysql', { name: '@conclave/mysql', conclave: { backend: 'mysql' }, peerDependencies: { '@conclave/core': '*' } });
    const found = installedBackendPackages(root);
    expect(found.map((p) => p.kind)).toEqual(['mysql', 'zookeeper', 'migrate']);
    expect(found[2]!.builtOver).toEqual(['@conclave/mysql']);
  });
});

test("the command's providers are core's memory and one for each backend package of the repository, of the kind it declares", () => {
  const declared = workspaceManifests(resolve(__dirname, '../../..'))
    .filter((m) => m.conclave?.backend !== undefined && !m.conclave.inProgress)
    .map((m) => m.conclave!.backend);
  expect(BACKEND_PROVIDERS[0]!.kind).toBe('memory');
  expect(BACKEND_PROVIDERS.map((p) => p.kind).slice(1).sort()).toEqual([...declared].sort());
  expect(declared).toEqual(expect.arrayContaining(['mysql', 'postgres', 'redis', 'zookeeper', 'etcd', 'migrate']));
});
