#!/usr/bin/env node
'use strict';
/**
 * Runs first in `npm test`: makes sure this machine has what the test suite needs, so that
 * `npm install && npm test` is the whole story.
 *
 * 1. Programs the tests start themselves (REQUIREMENTS): when one is missing and we are root with
 *    apt-get, `apt-get update` and `apt-get install` Debian's packages quietly (output goes to a
 *    log file, one summary line is printed). Otherwise stop with one line naming the apt command.
 * 2. Shared servers the tests talk to (SERVICES): a TCP connect with a short timeout each; a
 *    missing one is one line naming its address, how to start it and the variable that moves it.
 *
 * Silent and fast when everything is there. Plain Node (CommonJS, no dependencies): it runs
 * before `tsc --build`. Knobs, mainly to try the failure paths on a machine that has everything:
 *   CONCLAVE_SETUP_DRY_RUN=1   print the apt-get commands instead of running them
 *   CONCLAVE_SETUP_ROOT=DIR    look for programs and jars under DIR instead of / (apt-get too)
 * and one for machines that start their servers while the tests begin (CI does):
 *   CONCLAVE_SERVICE_WAIT_SECONDS=N   keep trying a shared server that does not answer for up to
 *                                     N seconds before giving up (default 0: one try)
 */
const { readdirSync, statSync, mkdirSync, openSync, closeSync, readFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

/**
 * What the tests run on this machine, with the Debian packages that provide it. A new backend
 * whose tests start their own servers adds one entry. `present` gets a probe (see makeProbe) and
 * must not do I/O beyond looking at files.
 */
const REQUIREMENTS = [
  {
    name: 'a Java runtime',
    present: (p) => p.command('java'),
    apt: ['default-jre-headless'],
  },
  {
    // Where packages/zookeeper/src/testing/zookeeper-jvm.ts looks (zookeeperClasspath()).
    name: "ZooKeeper's jars",
    present: (p) =>
      p.env.ZOOKEEPER_CLASSPATH
        ? true // checked on its own (zookeeperClasspathProblem): apt cannot fix a wrong variable
        : p.file('/usr/share/java/zookeeper.jar') ||
          p.dirHas('/usr/share/zookeeper/lib', /^zookeeper.*\.jar$/) ||
          p.dirHas('/opt/zookeeper/lib', /^zookeeper.*\.jar$/),
    apt: ['zookeeper'],
  },
  {
    // packages/redis/src/testing/redis-server.ts: private servers for restart and quorum tests.
    name: 'redis-server',
    present: (p) => p.command(p.env.REDIS_SERVER || 'redis-server'),
    apt: ['redis-server'],
  },
  {
    // packages/mysql/src/testing/mysql-server.ts: a private MariaDB for restart tests.
    name: 'MariaDB (mariadbd, mariadb-install-db, mariadb)',
    present: (p) => p.command('mariadbd') && p.command('mariadb-install-db') && p.command('mariadb'),
    apt: ['mariadb-server', 'mariadb-client'],
  },
  {
    // packages/etcd/src/testing/etcd-server.ts: private members (one, or a cluster of three).
    name: 'etcd',
    present: (p) => p.command(p.env.ETCD_BINARY || 'etcd'),
    apt: ['etcd-server'],
  },
];

/**
 * Shared servers the tests connect to, with the variable each test reads to find another one. A
 * backend whose tests use a shared server adds one entry here.
 */
const SERVICES = [
  {
    name: 'MariaDB',
    env: 'CONCLAVE_MYSQL_URI',
    defaultUrl: 'mysql://root@127.0.0.1:3306/test',
    defaultPort: 3306,
    start: 'sudo apt-get install mariadb-server && sudo service mariadb start',
  },
  {
    name: 'Redis',
    env: 'CONCLAVE_REDIS_URL',
    defaultUrl: 'redis://127.0.0.1:6379',
    defaultPort: 6379,
    start: 'sudo apt-get install redis-server && sudo service redis-server start',
  },
  {
    name: 'PostgreSQL',
    env: 'CONCLAVE_POSTGRES_URI',
    defaultUrl: 'postgres://root@127.0.0.1:5432/test',
    defaultPort: 5432,
    start: 'sudo apt-get install postgresql && sudo service postgresql start',
  },
];

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

/** A problem with ZOOKEEPER_CLASSPATH, or null. The launcher trusts the variable as given. */
function zookeeperClasspathProblem(env = process.env) {
  const cp = env.ZOOKEEPER_CLASSPATH;
  if (!cp) return null;
  const found = cp.split(path.delimiter).some((entry) => {
    const base = path.basename(entry);
    if (base === '*') entry = path.dirname(entry);
    try {
      if (statSync(entry).isDirectory()) return readdirSync(entry).some((f) => /^zookeeper.*\.jar$/.test(f));
      return /^zookeeper.*\.jar$/.test(path.basename(entry));
    } catch {
      return false;
    }
  });
  return found
    ? null
    : `${PREFIX} ZOOKEEPER_CLASSPATH=${cp} holds no zookeeper*.jar: point it at ZooKeeper's jars, or unset it to use Debian's zookeeper package`;
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
async function checkServices(env = process.env, log = (line) => console.log(line)) {
  let targets;
  let waitSeconds;
  try {
    waitSeconds = serviceWaitSeconds(env);
    targets = serviceTargets(env);
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

/**
 * Connections the shared MariaDB must allow: Jest runs several files at once (jest.config.js), and
 * a MySQL file can hold over a hundred at a moment on a loaded machine (each backend of a test
 * keeps its pool and its wake-up connections; see the MySQL README). MariaDB's default is 151.
 */
const MYSQL_MIN_CONNECTIONS = 1000;

/**
 * Raises the shared MariaDB's max_connections to MYSQL_MIN_CONNECTIONS (SET GLOBAL: until the
 * server restarts) when it is lower. Null, or a warning line when it cannot (no privilege): the
 * tests still run, and may find the server full.
 */
async function raiseMysqlConnections(env = process.env) {
  const url = env.CONCLAVE_MYSQL_URI || SERVICES[0].defaultUrl;
  let connection;
  try {
    connection = await require('mysql2/promise').createConnection({ uri: url, connectTimeout: CONNECT_TIMEOUT_MS });
    const [[row]] = await connection.query('SELECT @@max_connections AS n');
    if (Number(row.n) >= MYSQL_MIN_CONNECTIONS) return null;
    await connection.query(`SET GLOBAL max_connections = ${MYSQL_MIN_CONNECTIONS}`);
    console.log(`${PREFIX} MariaDB allowed ${row.n} connections; raised to ${MYSQL_MIN_CONNECTIONS} until it restarts (SET GLOBAL max_connections)`);
    return null;
  } catch (e) {
    return `${PREFIX} warning: could not raise MariaDB's max_connections to ${MYSQL_MIN_CONNECTIONS} (${e.message}); tests running at once may find it full`;
  } finally {
    await connection?.end().catch(() => undefined);
  }
}

async function main() {
  const problems = [];
  const zk = zookeeperClasspathProblem();
  if (zk) problems.push(zk);
  const req = prepareRequirements();
  if (req) problems.push(req);
  problems.push(...(await checkServices()));
  if (problems.length === 0) {
    const warning = await raiseMysqlConnections();
    if (warning) console.warn(warning);
  }
  if (problems.length > 0) {
    for (const line of problems) console.error(line);
    process.exitCode = 1;
  }
}

module.exports = {
  REQUIREMENTS,
  SERVICES,
  makeProbe,
  missingRequirements,
  aptPackages,
  aptCommands,
  cannotInstallMessage,
  zookeeperClasspathProblem,
  urlAddresses,
  serviceTargets,
  serviceMessage,
  serviceWaitSeconds,
  tryConnect,
  checkServices,
};

if (require.main === module) main();
