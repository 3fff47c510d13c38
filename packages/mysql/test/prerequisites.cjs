'use strict';
/**
 * What this package's tests need on the machine, for scripts/prepare-test-env.cjs (its header
 * describes the fields): MariaDB's programs for private servers (restarts, replication), and the
 * shared MariaDB, which the command's tests and the harness's guarded resource use too.
 */

const SHARED = {
  name: 'MariaDB',
  env: 'CONCLAVE_MYSQL_URI',
  defaultUrl: 'mysql://root@127.0.0.1:3306/test',
  defaultPort: 3306,
  start: 'sudo apt-get install mariadb-server && sudo service mariadb start',
};

/**
 * Connections the shared MariaDB must allow: Jest runs several files at once (jest.config.js), and
 * a MySQL file can hold over a hundred at a moment on a loaded machine (each backend of a test
 * keeps its pool and its wake-up connections; see the MySQL README). MariaDB's default is 151.
 */
const MYSQL_MIN_CONNECTIONS = 1000;

/**
 * Raises the shared MariaDB's max_connections to MYSQL_MIN_CONNECTIONS (SET GLOBAL: until the
 * server restarts) when it is lower. Null, or a warning when it cannot (no privilege): the tests
 * still run, and may find the server full.
 */
async function raiseMysqlConnections({ env = process.env, say = console.log, connectTimeoutMs = 2000 } = {}) {
  const url = env[SHARED.env] || SHARED.defaultUrl;
  let connection;
  try {
    connection = await require('mysql2/promise').createConnection({ uri: url, connectTimeout: connectTimeoutMs });
    const [[row]] = await connection.query('SELECT @@max_connections AS n');
    if (Number(row.n) >= MYSQL_MIN_CONNECTIONS) return null;
    await connection.query(`SET GLOBAL max_connections = ${MYSQL_MIN_CONNECTIONS}`);
    say(`MariaDB allowed ${row.n} connections; raised to ${MYSQL_MIN_CONNECTIONS} until it restarts (SET GLOBAL max_connections)`);
    return null;
  } catch (e) {
    return `could not raise MariaDB's max_connections to ${MYSQL_MIN_CONNECTIONS} (${e.message}); tests running at once may find it full`;
  } finally {
    await connection?.end().catch(() => undefined);
  }
}

module.exports = {
  requirements: [
    {
      // src/testing/mysql-server.ts: a private MariaDB for restart tests.
      name: 'MariaDB (mariadbd, mariadb-install-db, mariadb)',
      present: (p) => p.command('mariadbd') && p.command('mariadb-install-db') && p.command('mariadb'),
      apt: ['mariadb-server', 'mariadb-client'],
    },
  ],
  services: [SHARED],
  tuneServices: raiseMysqlConnections,
};
