#!/usr/bin/env node
'use strict';
/**
 * Runs first in `npm test`: makes sure this machine has what the test suite needs, so that
 * `npm install && npm test` is the whole story.
 *
 * Each workspace says what its tests need in `test/prerequisites.cjs` (a package still being built,
 * whose tests Jest leaves out, is left out here too); this script knows no backend. Such a file
 * exports any of:
 *   requirements           programs the tests start themselves: [{ name, present(probe), apt }],
 *                          `present` told by a probe (see makeProbe), doing no I/O beyond looking
 *                          at files; `apt` the Debian packages that provide it
 *   services               shared servers the tests connect to: [{ name, env, defaultUrl,
 *                          defaultPort, start }], `env` the variable the tests read to find another
 *   configurationProblem   (env) => a line, or null: a setting apt cannot fix (a variable pointing
 *                          nowhere)
 *   tuneServices           async ({ env, say, connectTimeoutMs }) => null or a warning: adjusts a
 *                          shared server for the suite once everything is there (`say` prints a line)
 *
 * 1. Requirements: when one is missing and we are root with apt-get, `apt-get update` and
 *    `apt-get install` Debian's packages quietly (output goes to a log file, one summary line is
 *    printed). Otherwise stop with one line naming the apt command.
 * 2. Services: a TCP connect with a short timeout each; a missing one is one line naming its
 *    address, how to start it and the variable that moves it.
 *
 * Silent and fast when everything is there. Plain Node (CommonJS, no dependencies): it runs
 * before `tsc --build`. Knobs, mainly to try the failure paths on a machine that has everything:
 *   CONCLAVE_SETUP_DRY_RUN=1   print the apt-get commands instead of running them
 *   CONCLAVE_SETUP_ROOT=DIR    look for programs and jars under DIR instead of / (apt-get too)
 * and one for machines that start their servers while the tests begin (CI does):
 *   CONCLAVE_SERVICE_WAIT_SECONDS=N   keep trying a shared server that does not answer for up to
 *                                     N seconds before giving up (default 0: one try)
 */
const { existsSync, readdirSync, statSync, mkdirSync, openSync, closeSync, readFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { isInProgress, workspacePackages } = require('./workspaces.cjs');

const ROOT = path.join(__dirname, '..');

/** Each workspace's `test/prerequisites.cjs`, in the workspaces' order (see the header). */
function loadPrerequisites(root = ROOT, env = process.env) {
  return workspacePackages(root)
    .filter(({ manifest }) => !isInProgress(manifest, env))
    .map(({ dir }) => path.join(root, dir, 'test', 'prerequisites.cjs'))
    .filter((file) => existsSync(file))
    .map((file) => require(file));
}

const PREREQUISITES = loadPrerequisites();
/** Every workspace's requirements: what the tests run on this machine. */
const REQUIREMENTS = PREREQUISITES.flatMap((p) => p.requirements || []);
/** Every workspace's services: the shared servers the tests connect to. */
const SERVICES = PREREQUISITES.flatMap((p) => p.services || []);

const CONNECT_TIMEOUT_MS = 2000;
const RETRY_INTERVAL_MS = 500;
const PREFIX = 'npm test:';

/** File-system probe, rooted at `root` (default /) so that tests and dry runs can pretend. */
function makeProbe(env = process.env, root = env.CONCLAVE_SETUP_ROOT || '/') {
  const at = (p) => path.join(root, p);
  const isFile = (p) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const dirs = (env.PATH || '').split(path.delimiter).filter(Boolean).concat(['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/sbin', '/bin']);
  return {
    env,
    file: (p) => isFile(at(p)),
    dirHas: (dir, pattern) => {
      try {
        return readdirSync(at(dir)).some((f) => pattern.test(f));
      } catch {
        return false;
      }
    },
    command: (name) => (name.includes('/') ? isFile(at(name)) : dirs.some((d) => isFile(at(path.join(d, name))))),
  };
}

/** The requirements that are missing, as found by `probe`. */
function missingRequirements(probe, requirements = REQUIREMENTS) {
  return requirements.filter((r) => !r.present(probe));
}

/** The Debian packages that provide `missing`, each once. */
function aptPackages(missing) {
  return [...new Set(missing.flatMap((r) => r.apt))];
}

/** The commands that install `packages` (prefixed with sudo when not root). */
function aptCommands(packages, sudo) {
  const s = sudo ? 'sudo ' : '';
  return [`${s}apt-get update`, `${s}apt-get install -y --no-install-recommends ${packages.join(' ')}`];
}

/** "a, b and c" */
function names(requirements) {
  const n = requirements.map((r) => r.name);
  return n.length > 1 ? `${n.slice(0, -1).join(', ')} and ${n[n.length - 1]}` : n.join('');
}

/** One line for requirements that cannot be installed here. */
function cannotInstallMessage(missing, why) {
  return `${PREFIX} missing ${names(missing)} (${why}). Install with: ${aptCommands(aptPackages(missing), true).join(' && ')}`;
}

/** The settings problems the workspaces find (`configurationProblem`), each a line. */
function configurationProblems(env = process.env, prerequisites = PREREQUISITES) {
  return prerequisites
    .map((p) => p.configurationProblem && p.configurationProblem(env))
    .filter(Boolean)
    .map((line) => `${PREFIX} ${line}`);
}

/**
 * The host:port pairs of a mysql://, postgres:// or redis:// URL (redis://h1,h2:6380 lists several), with
 * `defaultPort` where none is given. Throws on a URL it cannot read.
 */
function urlAddresses(url, defaultPort) {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/@]*@)?([^/?#]+)/i.exec(url);
  if (!m) throw new Error(`not a URL: ${url}`);
  return m[1].split(',').filter(Boolean).map((hp) => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(hp);
    if (v6) return { host: v6[1], port: Number(v6[2] || defaultPort) };
    const [host, port] = hp.split(':');
    return { host, port: Number(port || defaultPort) };
  });
}

/** Each service with where it is expected: [{ service, url, fromEnv, addresses }]. */
function serviceTargets(env = process.env, services = SERVICES) {
  return services.map((service) => {
    const url = env[service.env] || service.defaultUrl;
    return { service, url, fromEnv: Boolean(env[service.env]), addresses: urlAddresses(url, service.defaultPort) };
  });
}

/** One line for a service that did not accept a connection. */
function serviceMessage(target, address, error) {
  const { service } = target;
  const where = `${address.host}:${address.port}`;
  const from = target.fromEnv ? ` (from ${service.env})` : '';
  const fix = target.fromEnv
    ? `start it, or fix ${service.env}`
    : `start it (${service.start}), or point ${service.env} at another server, e.g. ${service.env}=${service.defaultUrl}`;
  return `${PREFIX} ${service.name} is not reachable at ${where}${from}: ${error}; ${fix}`;
}

/** Resolves to null when a TCP connection to host:port opens within timeoutMs, else a reason. */
function tryConnect({ host, port }, timeoutMs = CONNECT_TIMEOUT_MS) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (reason) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => done(null));
    socket.once('error', (e) => done(e.code === 'ECONNREFUSED' ? 'connection refused' : e.code || e.message));
  });
}

/** Seconds to keep trying a server that does not answer (CONCLAVE_SERVICE_WAIT_SECONDS). */
function serviceWaitSeconds(env = process.env) {
  const raw = env.CONCLAVE_SERVICE_WAIT_SECONDS;
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`CONCLAVE_SERVICE_WAIT_SECONDS must be a number of seconds >= 0, got "${raw}"`);
  return n;
}

/**
 * Tries host:port until it answers or `waitMs` has passed since the first try; resolves to null
 * or the last reason. `onWait` is called once, before the first retry.
 */
async function connectWithin(address, waitMs, onWait = () => {}) {
  const deadline = Date.now() + waitMs;
  let reason = await tryConnect(address);
  if (reason && waitMs > 0) onWait(reason);
  while (reason && Date.now() + RETRY_INTERVAL_MS <= deadline) {
    await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MS));
    reason = await tryConnect(address);
  }
  return reason;
}

/** Every service line, checked in parallel (one timeout long, or the wait when one is set). */
async function checkServices(env = process.env, log = (line) => console.log(line), services = SERVICES) {
  let targets;
  let waitSeconds;
  try {
    waitSeconds = serviceWaitSeconds(env);
    targets = serviceTargets(env, services);
  } catch (e) {
    return [`${PREFIX} ${e.message}`];
  }
  const checks = targets.flatMap((t) => t.addresses.map(async (a) => {
    const onWait = (first) => log(`${PREFIX} ${t.service.name} at ${a.host}:${a.port}: ${first}; trying again for up to ${waitSeconds} s (CONCLAVE_SERVICE_WAIT_SECONDS)`);
    const reason = await connectWithin(a, waitSeconds * 1000, onWait);
    return reason && serviceMessage(t, a, reason);
  }));
  return (await Promise.all(checks)).filter(Boolean);
}

/** Installs `packages` with apt-get, output to `logFile`. Returns null or a one-line failure. */
function aptInstall(packages, logFile, env) {
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'w');
  const started = Date.now();
  process.stdout.write(`${PREFIX} installing ${packages.join(' ')} with apt-get (log: ${logFile}) ... `);
  try {
    const runEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update', '-q'], ['install', '-y', '-q', '--no-install-recommends', '-o', 'Dpkg::Use-Pty=0', ...packages]]) {
      const r = spawnSync('apt-get', args, { env: runEnv, stdio: ['ignore', fd, fd] });
      if (r.status !== 0) {
        process.stdout.write('failed\n');
        const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-1)[0] || r.error?.message || '';
        return `${PREFIX} apt-get ${args[0]} failed (exit ${r.status ?? r.signal}): ${tail} (full log: ${logFile})`;
      }
    }
  } finally {
    closeSync(fd);
  }
  process.stdout.write(`done in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return null;
}

/** The requirement step: null when everything is (now) there, else one line. */
function prepareRequirements(env = process.env) {
  const probe = makeProbe(env);
  const missing = missingRequirements(probe);
  if (missing.length === 0) return null;
  const packages = aptPackages(missing);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!probe.command('apt-get')) return cannotInstallMessage(missing, 'no apt-get here to install them');
  if (!isRoot) return cannotInstallMessage(missing, 'not root, so they are not installed for you');
  if (env.CONCLAVE_SETUP_DRY_RUN && env.CONCLAVE_SETUP_DRY_RUN !== '0') {
    return `${PREFIX} missing ${names(missing)}; dry run (CONCLAVE_SETUP_DRY_RUN), would run: ${aptCommands(packages, false).join(' && ')}`;
  }
  const logFile = path.join(__dirname, '..', 'node_modules', '.cache', 'conclave', 'apt-install.log');
  const failure = aptInstall(packages, logFile, env);
  if (failure) return failure;
  const still = missingRequirements(makeProbe(env));
  return still.length === 0 ? null : `${PREFIX} still missing ${names(still)} after installing ${packages.join(' ')} (log: ${logFile})`;
}

/** Every workspace's `tuneServices`, one after the other; the warnings they return, each a line. */
async function tuneServices(env = process.env, prerequisites = PREREQUISITES) {
  const warnings = [];
  const say = (line) => console.log(`${PREFIX} ${line}`);
  for (const p of prerequisites) {
    const warning = p.tuneServices && (await p.tuneServices({ env, say, connectTimeoutMs: CONNECT_TIMEOUT_MS }));
    if (warning) warnings.push(`${PREFIX} warning: ${warning}`);
  }
  return warnings;
}

async function main() {
  const problems = configurationProblems();
  const req = prepareRequirements();
  if (req) problems.push(req);
  problems.push(...(await checkServices()));
  if (problems.length === 0) {
    for (const warning of await tuneServices()) console.warn(warning);
  }
  if (problems.length > 0) {
    for (const line of problems) console.error(line);
    process.exitCode = 1;
  }
}

module.exports = {
  loadPrerequisites,
  REQUIREMENTS,
  SERVICES,
  makeProbe,
  missingRequirements,
  aptPackages,
  aptCommands,
  cannotInstallMessage,
  configurationProblems,
  urlAddresses,
  serviceTargets,
  serviceMessage,
  serviceWaitSeconds,
  tryConnect,
  checkServices,
};

if (require.main === module) main();
