'use strict';
/**
 * The repository's workspaces as npm sees them: the root package.json's `workspaces`, where a
 * pattern ending in `/*` stands for every folder under it that holds a package.json (so a new
 * package under `packages/` is one without editing the root). Plain Node (CommonJS, no
 * dependencies): jest.config.js and scripts/prepare-test-env.cjs read it before anything is built,
 * and the harness's `workspaceManifests` reads it too, so all three agree with npm.
 */
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

/** The workspace folders of the repository at `root`, relative to it: patterns in their order, a `dir/*` in name order. */
function workspaceDirs(root) {
  const { workspaces } = readJson(path.join(root, 'package.json'));
  return workspaces.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) {
      if (/[*?[{]/.test(pattern)) throw new Error(`workspace pattern ${pattern}: only "dir" and "dir/*" are understood here`);
      return [pattern];
    }
    const parent = pattern.slice(0, -2);
    return readdirSync(path.join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(root, parent, entry.name, 'package.json')))
      .map((entry) => `${parent}/${entry.name}`)
      .sort();
  });
}

/** Each workspace's folder (relative to `root`) and its package.json. */
function workspacePackages(root) {
  return workspaceDirs(root).map((dir) => ({ dir, manifest: readJson(path.join(root, dir, 'package.json')) }));
}

/**
 * Whether a package is still being built (`"conclave": { "inProgress": "…" }` in its package.json):
 * `npm test` leaves out its tests, and the checks they need, until CONCLAVE_IN_PROGRESS=1.
 */
function isInProgress(manifest, env = process.env) {
  return env.CONCLAVE_IN_PROGRESS !== '1' && Boolean(manifest.conclave && manifest.conclave.inProgress);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

module.exports = { workspaceDirs, workspacePackages, isInProgress };
