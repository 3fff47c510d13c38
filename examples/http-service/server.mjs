// An HTTP service that runs one background worker across all its copies: the copy that leads
// runs it, the others stand by. /healthz answers from the Elector's health() (for a liveness
// probe); /leader says whether this copy leads.
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Elector, installShutdownHook } from '@conclave/core';
import { MysqlBackend } from '@conclave/mysql';

const uri = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';
const port = Number(process.env.PORT ?? 8080);
const election = process.env.ELECTION ?? 'example-http-worker';

const backend = new MysqlBackend({ uri });
const elector = new Elector({ backend, election, leaseMs: Number(process.env.LEASE_MS ?? 10_000) });

// The worker: runs while this copy leads, and stops when `signal` aborts (before the lease can end).
elector.whileLeader(async ({ token, signal }) => {
  console.log(`worker started, token ${token}`);
  while (!signal.aborted) {
    // One unit of work; pass `token` to what you write to, so a stale leader's writes are refused.
    await sleep(200, undefined, { signal }).catch(() => {});
  }
  console.log(`worker stopped, token ${token}`);
});

const server = createServer((req, res) => {
  const reply = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.url === '/healthz') {
    const health = elector.health();
    return reply(health.ok ? 200 : 503, health);
  }
  if (req.url === '/leader') {
    return reply(200, { candidateId: elector.candidateId, leading: elector.isLeader(), token: elector.token });
  }
  reply(404, { error: 'not found' });
});

// On SIGTERM/SIGINT: stop the worker, release the lease (another copy takes over at once), close.
installShutdownHook(elector, {
  onStopped: async () => {
    await new Promise((resolve) => server.close(resolve));
    await backend.close();
  },
});

await elector.start();
server.listen(port, () => console.log(`listening on ${port} as ${elector.candidateId}`));
