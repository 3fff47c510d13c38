'use strict';
/**
 * What this package's tests need on the machine, for scripts/prepare-test-env.cjs (its header
 * describes the fields): the shared PostgreSQL. The private servers some tests start use Debian's
 * PostgreSQL 15 binaries (src/testing/postgres-server.ts), which are neither checked nor installed yet.
 */
module.exports = {
  services: [
    {
      name: 'PostgreSQL',
      env: 'CONCLAVE_POSTGRES_URI',
      defaultUrl: 'postgres://root@127.0.0.1:5432/test',
      defaultPort: 5432,
      start: 'sudo apt-get install postgresql && sudo service postgresql start',
    },
  ],
};
