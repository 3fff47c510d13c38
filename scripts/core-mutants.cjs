#!/usr/bin/env node
/**
 * Deliberate bugs the core's tests must catch: `node scripts/core-mutants.cjs [name…]`.
 *
 * Each mutant is one small edit of the core's source that breaks a rule of the Elector or of a
 * backend's lease. For each, the script applies the edit, runs the core's tests (the conformance
 * suite on the memory backend among them), expects them to FAIL, and puts the source back (also
 * on Ctrl-C). It prints one line per mutant, `caught` or `SURVIVED`, and exits 1 if any survived
 * or could not be applied.
 *
 * The rules are what matters, not where the edits fall: when the core is reorganised, move each
 * edit to where its rule now lives (an edit that no longer applies is reported as such) and keep
 * the list at least this long. Run it before and after any rewrite of the core.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
// At most two workers: the core's timing tests share the machine with the mutated runs.
const TESTS = ['packages/core', '--maxWorkers=2'];

/** `find` must occur exactly once in `file`; it is replaced by `replace`. */
const MUTANTS = [
  {
    name: 'health-ignores-deadline',
    rule: 'health() is not ok for a leader past its lease deadline',
    file: 'packages/core/src/elector-health.ts',
    find: "if (role === 'leader' && term && now >= term.deadline) {",
    replace: 'if (false) {',
  },
  {
    name: 'grant-forgets-last-token',
    rule: 'a campaign answered with a token the Elector already led with is not a new term',
    file: 'packages/core/src/elector-machine.ts',
    find: 'lastToken: s.lastToken, deadlineMs: deadline',
    replace: 'lastToken: null, deadlineMs: deadline',
  },
  {
    name: 'renew-ignores-renewMs',
    rule: 'a leader renews every renewMs (capped at half the usable lease)',
    file: 'packages/core/src/elector-pacing.ts',
    find: 'Math.min(o.renewMs, half)',
    replace: 'half',
  },
  {
    name: 'grant-too-late-used',
    rule: 'a lease granted after its deadline is not led on',
    file: 'packages/core/src/elector-pacing.ts',
    find: "if (mustStepDown(s.nowMs, s.deadlineMs)) return 'too-late';",
    replace: '',
  },
  {
    name: 'deadline-without-margin',
    rule: 'isLeader() turns false a safety margin before the lease can end on the server',
    file: 'packages/core/src/elector-pacing.ts',
    find: 'return sentAtMs + usableMs - safetyMarginMs;',
    replace: 'return sentAtMs + usableMs;',
  },
  {
    name: 'memory-renews-any-term',
    rule: "a backend renews only the holder's own term",
    file: 'packages/core/src/memory-backend.ts',
    find: 'if (!lease || lease.holder !== candidateId || lease.token !== token) {',
    replace: 'if (!lease || lease.holder !== candidateId) {',
  },
  {
    name: 'late-renewal-revives-term',
    rule: 'a renewal answered after the role changed (stepDown, stop, pause) is ignored',
    file: 'packages/core/src/elector-machine.ts',
    find: 'if (e.epoch !== s.epoch || !term) return;',
    replace: 'if (!term) return;',
  },
];

const only = process.argv.slice(2);
const chosen = only.length ? MUTANTS.filter((m) => only.includes(m.name)) : MUTANTS;
if (only.length && chosen.length !== only.length) {
  console.error(`unknown mutant; known: ${MUTANTS.map((m) => m.name).join(', ')}`);
  process.exit(2);
}

let restore = null;
process.on('SIGINT', () => {
  if (restore) restore();
  process.exit(130);
});

execFileSync('npx', ['tsc', '--build'], { cwd: ROOT, stdio: 'inherit' });
let bad = 0;
for (const m of chosen) {
  const path = join(ROOT, m.file);
  const original = readFileSync(path, 'utf8');
  const at = original.indexOf(m.find);
  if (at < 0 || original.indexOf(m.find, at + 1) >= 0) {
    console.log(`${m.name}: NOT APPLIED (the edit does not occur exactly once in ${m.file}; move it to where "${m.rule}" lives)`);
    bad++;
    continue;
  }
  restore = () => writeFileSync(path, original);
  writeFileSync(path, original.slice(0, at) + m.replace + original.slice(at + m.find.length));
  const started = Date.now();
  const run = spawnSync('npx', ['jest', ...TESTS, '--silent'], { cwd: ROOT, encoding: 'utf8' });
  restore();
  restore = null;
  const seconds = Math.round((Date.now() - started) / 1000);
  const failed = (run.stdout + run.stderr).match(/^\s+✕ .*$/gm) ?? [];
  if (run.status === 0) {
    console.log(`${m.name}: SURVIVED (${seconds} s) — no test checks "${m.rule}"`);
    bad++;
  } else {
    console.log(`${m.name}: caught by ${failed.length} tests (${seconds} s)${failed.length ? `, e.g.${failed[0].replace(/^\s+✕/, '')}` : ''}`);
  }
}
process.exit(bad ? 1 : 0);
