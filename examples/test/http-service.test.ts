import { get } from 'node:http';
import { startExample, killAll, uniqueElection, type ExampleProcess } from './example-process';

const BASE_PORT = 18_000 + (process.pid % 1000) * 3;

/** GET with a connection of its own, closed after the answer (no pooled socket outlives the test). */
function getJson(port: number, path: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
}

describe('examples/http-service', () => {
  const processes: ExampleProcess[] = [];
  afterAll(() => killAll(processes));

  test('three copies: /healthz answers 200 on each and exactly one copy leads', async () => {
    const election = uniqueElection('example-http');
    const ports = [0, 1, 2].map((i) => BASE_PORT + i);
    for (const port of ports) {
      processes.push(startExample('http-service/server.mjs', { PORT: String(port), ELECTION: election, LEASE_MS: '3000' }));
    }
    await Promise.all(processes.map((p) => p.waitForLine(/^listening on/)));
    // Wait until some copy's worker runs, then look at every copy at once, several times.
    await Promise.race(processes.map((p) => p.waitForLine(/^worker started, token \d+/).catch(() => {})));
    for (let round = 0; round < 5; round++) {
      const health = await Promise.all(ports.map((port) => getJson(port, '/healthz')));
      expect(health.map((h) => h.status)).toEqual([200, 200, 200]);
      const leaders = await Promise.all(ports.map((port) => getJson(port, '/leader')));
      // Never two at once (a loaded machine may catch the leader between a late renewal and the next).
      expect(leaders.filter((l) => l.body.leading === true).length).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 200));
    }
    // One copy ran the worker, one term: no other copy ever started it.
    const workers = processes.filter((p) => p.lines.some((l) => l.startsWith('worker started')));
    expect(workers).toHaveLength(1);
  }, 20_000);
});
