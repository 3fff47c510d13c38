import { Socket } from 'node:net';
import type { BenchServer } from '@conclave/test-harness/tools';
import { RedisServer } from './redis-server';

/** One `INFO all` on a fresh connection (inline command, bulk reply). */
function redisInfo(port: number, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let buf = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error('redis INFO timed out')));
    socket.once('error', fail);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      const len = Number(buf.subarray(1, eol).toString());
      if (buf.length >= eol + 2 + len) {
        socket.destroy();
        resolve(buf.subarray(eol + 2, eol + 2 + len).toString());
      }
    });
    socket.connect(port, '127.0.0.1', () => socket.write('INFO all\r\n'));
  });
}

/** Commands the backend's Lua scripts run (src/redis-scripts.ts); nothing else sends them here. */
const SCRIPT_INNER = new Set(['del', 'get', 'hget', 'hmget', 'hset', 'pexpire', 'pttl', 'publish', 'set', 'time', 'zadd', 'zrange', 'zrem', 'zremrangebyscore']);

/**
 * The bench's Redis: a private redis-server on a free port, so that only the bench's traffic is
 * counted, with the keyspace events quiet followers need (`notify-keyspace-events Kgx`, see the
 * package README), as a Redis that holds elections should be configured.
 */
export async function startRedisBenchServer(): Promise<BenchServer> {
  const server = await RedisServer.start({ args: ['--notify-keyspace-events', 'Kgx'] });
  const port = server.port;
  return {
    port,
    url: (p = port) => `redis://127.0.0.1:${p}`,
    counterName: 'client commands (INFO commandstats calls of EVALSHA/EVAL and other top-level commands; commands run inside scripts and INFO excluded); network reads (total_reads_processed)',
    description: `private redis-server on 127.0.0.1:${port} (notify-keyspace-events Kgx)`,
    async counters() {
      const info = await redisInfo(port);
      // Requests from clients: script calls and other top-level commands. commandstats also
      // counts the commands a Lua script runs (HSET, PEXPIRE, …): those are left out.
      let ops = 0;
      for (const m of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
        if (m[1] !== 'info' && !SCRIPT_INNER.has(m[1]!)) ops += Number(m[2]);
      }
      const reads = Number(/^total_reads_processed:(\d+)/m.exec(info)?.[1] ?? NaN);
      // Every probe is one network read (its own INFO); the caller subtracts per probe.
      return { ops, reads };
    },
    async version() {
      return `redis ${/^redis_version:(\S+)/m.exec(await redisInfo(port))?.[1] ?? 'unknown'}`;
    },
    close: () => server.kill(),
  };
}
