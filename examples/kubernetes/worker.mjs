// A Deployment's container: several replicas campaign, the leader runs the work. On SIGTERM (a
// rolling restart, a scale-down) the shutdown hook aborts the work, waits for it, releases the
// lease and exits: another replica takes over in milliseconds, not after a lease.
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostname } from 'node:os';
import { Elector, installShutdownHook } from '@conclave/core';
import { PostgresBackend } from '@conclave/postgres';

const uri = process.env.CONCLAVE_POSTGRES_URI ?? 'postgres://root@127.0.0.1:5432/test';
const election = process.env.ELECTION ?? 'example-k8s-worker';
const port = Number(process.env.PORT ?? 8080);

const backend = new PostgresBackend({ uri });
// The pod's name is a readable candidate id; the Elector adds a nonce of its own.
const elector = new Elector({ backend, election, candidateId: process.env.POD_NAME ?? hostname() });

elector.whileLeader(async ({ token, signal }) => {
  console.log(`leading with token ${token}`);
  while (!signal.aborted) await sleep(100, undefined, { signal }).catch(() => {});
  console.log(`stopped leading, token ${token}`);
});

// Liveness: health().ok is false when a leader is past its deadline or the backend is gone.
const probes = createServer((req, res) => {
  const health = elector.health();
  res.writeHead(req.url === '/healthz' && !health.ok ? 503 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(health));
}).listen(port);

installShutdownHook(elector, {
  // Keep below the pod's terminationGracePeriodSeconds.
  timeoutMs: 20_000,
  onStopped: async () => {
    probes.close();
    await backend.close();
    console.log('released and closed');
  },
});

await elector.start();
console.log(`campaigning as ${elector.candidateId}`);
