'use strict';
/**
 * What this package's tests need on the machine, for scripts/prepare-test-env.cjs (its header
 * describes the fields): etcd, for private members (one, or a cluster of three).
 */
module.exports = {
  requirements: [
    {
      // src/testing/etcd-server.ts
      name: 'etcd',
      present: (p) => p.command(p.env.ETCD_BINARY || 'etcd'),
      apt: ['etcd-server'],
    },
  ],
};
