'use strict';
/**
 * What this package's tests need on the machine, for scripts/prepare-test-env.cjs (its header
 * describes the fields): redis-server for private servers (restarts, quorums, Sentinel), and the
 * shared Redis, which the command's tests and the harness's guarded resource use too.
 */
module.exports = {
  requirements: [
    {
      // src/testing/redis-server.ts
      name: 'redis-server',
      present: (p) => p.command(p.env.REDIS_SERVER || 'redis-server'),
      apt: ['redis-server'],
    },
  ],
  services: [
    {
      name: 'Redis',
      env: 'CONCLAVE_REDIS_URL',
      defaultUrl: 'redis://127.0.0.1:6379',
      defaultPort: 6379,
      start: 'sudo apt-get install redis-server && sudo service redis-server start',
    },
  ],
};
