'use strict';
// Requires every path each installed @conclave package exports (its package.json `exports`),
// from the scratch project, as a user's `require` would. Prints [path, error or null] pairs as JSON.
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const scope = path.join(process.cwd(), 'node_modules', '@conclave');
const results = [];
for (const folder of readdirSync(scope).sort()) {
  const manifest = JSON.parse(readFileSync(path.join(scope, folder, 'package.json'), 'utf8'));
  for (const subpath of Object.keys(manifest.exports ?? { '.': null })) {
    const request = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    try {
      require(request);
      results.push([request, null]);
    } catch (err) {
      results.push([request, String(err && err.message).split('\n')[0]]);
    }
  }
}
console.log(JSON.stringify(results));
