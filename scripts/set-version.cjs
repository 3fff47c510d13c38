#!/usr/bin/env node
'use strict';
/**
 * Sets one version on the repository and every workspace, and every `@conclave/*` range in their
 * dependencies, peer and dev dependencies to `^<version>`: the packages are released together,
 * and `npm version --workspaces` leaves those ranges behind (a `^0.1.0` no longer matches a
 * workspace at 0.2.0, so npm would look for the old version in the registry). Run `npm install`
 * after it to update package-lock.json (see docs/releasing.md).
 *
 * Usage: node scripts/set-version.cjs <version>
 */
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { workspaceDirs } = require('./workspaces.cjs');

const ROOT = path.resolve(__dirname, '..');
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** Rewrites the package.json files under `root`; returns the files changed. */
function setVersion(version, root = ROOT) {
  if (!VERSION.test(version)) throw new Error(`not a version: ${JSON.stringify(version)} (expected x.y.z or x.y.z-pre)`);
  const changed = [];
  for (const dir of ['.', ...workspaceDirs(root)]) {
    const file = path.join(root, dir, 'package.json');
    const text = readFileSync(file, 'utf8');
    const manifest = JSON.parse(text);
    manifest.version = version;
    for (const field of ['dependencies', 'peerDependencies', 'devDependencies']) {
      for (const name of Object.keys(manifest[field] ?? {})) {
        if (name.startsWith('@conclave/')) manifest[field][name] = `^${version}`;
      }
    }
    const updated = `${JSON.stringify(manifest, null, 2)}\n`;
    if (updated !== text) {
      writeFileSync(file, updated);
      changed.push(path.relative(root, file));
    }
  }
  return changed;
}

if (require.main === module) {
  try {
    for (const file of setVersion(process.argv[2] ?? '')) console.log(file);
  } catch (err) {
    console.error(`set-version: ${err.message}`);
    process.exit(2);
  }
}

module.exports = { setVersion };
