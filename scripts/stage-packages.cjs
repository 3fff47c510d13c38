#!/usr/bin/env node
'use strict';
/**
 * Writes the published form of every public workspace package to a folder of its own (default
 * `.release/`, one sub-folder per package), from which `npm pack` and `npm publish` run (see
 * docs/releasing.md). In that copy's package.json:
 * - the `./testing` entry leaves `exports`: a backend's kit needs the private test harness, so it
 *   stays in the repository (the workspace's `files` already leaves its files out of the tarball);
 * - every `@conclave/*` range becomes `^<version>`: the packages are released together, at one version;
 * - `devDependencies` and `scripts` go (among them the `prepack` guard that refuses a pack from the workspace).
 * Needs the build (`tsc --build`). Prints each staged folder, one a line.
 *
 * Usage: node scripts/stage-packages.cjs [folder]
 */
const { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { workspacePackages } = require('./workspaces.cjs');

const ROOT = path.resolve(__dirname, '..');
/** Never copied: what only the repository uses. */
const LEFT_OUT = new Set(['node_modules', 'test', 'tsconfig.json', 'tsconfig.tsbuildinfo']);

/** The published packages: the workspaces that are not private. */
function publishedPackages(root = ROOT) {
  return workspacePackages(root).filter(({ manifest }) => !manifest.private);
}

/** The package.json a staged copy gets (see above). */
function publishedManifest(manifest, version) {
  const { devDependencies, scripts, ...published } = structuredClone(manifest);
  void devDependencies;
  void scripts;
  if (published.exports) delete published.exports['./testing'];
  for (const field of ['dependencies', 'peerDependencies']) {
    for (const name of Object.keys(published[field] ?? {})) {
      if (name.startsWith('@conclave/')) published[field][name] = `^${version}`;
    }
  }
  return published;
}

/** Stages every published package under `out`; returns the staged folders. */
function stagePackages(out, root = ROOT) {
  const packages = publishedPackages(root);
  const versions = [...new Set(packages.map(({ manifest }) => manifest.version))];
  if (versions.length !== 1) throw new Error(`the published packages must share one version; found ${versions.join(', ')}`);
  const staged = [];
  for (const { dir, manifest } of packages) {
    const from = path.join(root, dir);
    if (!existsSync(path.join(from, 'dist'))) throw new Error(`${manifest.name} is not built: run npx tsc --build first`);
    const to = path.join(out, path.basename(dir));
    rmSync(to, { recursive: true, force: true });
    mkdirSync(to, { recursive: true });
    cpSync(from, to, { recursive: true, filter: (file) => file === from || !LEFT_OUT.has(path.relative(from, file).split(path.sep)[0]) });
    writeFileSync(path.join(to, 'package.json'), `${JSON.stringify(publishedManifest(manifest, versions[0]), null, 2)}\n`);
    staged.push(to);
  }
  return staged;
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] ?? path.join(ROOT, '.release'));
  for (const dir of stagePackages(out)) console.log(dir);
}

module.exports = { publishedPackages, publishedManifest, stagePackages };
