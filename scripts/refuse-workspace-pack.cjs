#!/usr/bin/env node
'use strict';
// The `prepack` of every published package: a tarball is made from its staged copy, whose
// package.json is the published one (no test kit entry, the release's version ranges).
console.error('conclave: pack or publish the staged copies (node scripts/stage-packages.cjs), not the workspace: see docs/releasing.md');
process.exit(1);
