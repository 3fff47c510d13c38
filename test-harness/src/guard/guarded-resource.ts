import Redis from 'ioredis';
import { createPool, type Pool, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { withTimeout } from '@conclave/core/spi';
import type { GuardConfig, GuardState, GuardVerdict } from './guard-config';

/**
 * Compare-and-set on a hash: accept the write only if no greater token was accepted before.
 * Returns the accepted write's sequence number, or -1 when rejected.
 */
const REDIS_CAS = `
local cur = redis.call('HGET', KEYS[1], 'token')
if cur and tonumber(cur) > tonumber(ARGV[1]) then
  redis.call('HINCRBY', KEYS[1], 'rejected', 1)
  return -1
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'holder', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'seq', 1)
`;

/** One client of a guarded resource. `write` rejects (never hangs) when the store does not answer in `timeoutMs`. */
export interface GuardClient {
  write(token: number, candidateId: string): Promise<GuardVerdict>;
  close(): Promise<void>;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function assertTable(table: string): void {
  if (!IDENT.test(table)) throw new Error(`guard table must be a plain identifier, got ${JSON.stringify(table)}`);
}

function redisClient(url: string, timeoutMs: number): Redis {
  const client = new Redis(url, {
    lazyConnect: false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 50, 500),
  });
  client.on('error', () => undefined);
  return client;
}

function mysqlPool(url: string, timeoutMs: number): Pool {
  return createPool({ uri: url, connectionLimit: 2, connectTimeout: timeoutMs, enableKeepAlive: true });
}

function timedOut(what: string, ms: number): () => Error {
  return () => new Error(`${what} timed out after ${ms} ms`);
}

/** Runs `op` on a short-lived connection to the resource's store, closed afterwards. */
async function withStore<T>(
  config: GuardConfig,
  op: { redis: (client: Redis, key: string) => Promise<T>; mysql: (pool: Pool, table: string, name: string) => Promise<T> },
): Promise<T> {
  if (config.kind === 'redis') {
    const client = redisClient(config.url, 5000);
    try {
      return await op.redis(client, config.key);
    } finally {
      client.disconnect();
    }
  }
  assertTable(config.table);
  const pool = mysqlPool(config.url, 5000);
  try {
    return await op.mysql(pool, config.table, config.name);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** Opens a client (a candidate opens one for its run). */
export function openGuard(config: GuardConfig, timeoutMs = 2000): GuardClient {
  if (config.kind === 'redis') {
    const client = redisClient(config.url, timeoutMs);
    return {
      async write(token, candidateId) {
        const seq = Number(await withTimeout(client.eval(REDIS_CAS, 1, config.key, String(token), candidateId), timeoutMs, timedOut('guard write', timeoutMs)));
        return seq < 0 ? { accepted: false, seq: null } : { accepted: true, seq };
      },
      async close() {
        client.disconnect();
      },
    };
  }
  assertTable(config.table);
  const pool = mysqlPool(config.url, timeoutMs);
  return {
    async write(token, candidateId) {
      // The fencing check is the WHERE clause; LAST_INSERT_ID(expr) hands the new seq back in the OK packet.
      const [result] = await withTimeout(
        pool.query<ResultSetHeader>(
          `UPDATE \`${config.table}\` SET token = ?, holder = ?, seq = LAST_INSERT_ID(seq + 1) WHERE name = ? AND token <= ?`,
          [token, candidateId, config.name, token],
        ),
        timeoutMs,
        timedOut('guard write', timeoutMs),
      );
      return result.affectedRows === 1 ? { accepted: true, seq: Number(result.insertId) } : { accepted: false, seq: null };
    },
    async close() {
      await pool.end().catch(() => undefined);
    },
  };
}

/** Creates the resource empty (token 0), replacing any earlier state of the same key/row. */
export async function prepareGuard(config: GuardConfig): Promise<void> {
  await withStore(config, {
    redis: async (client, key) => {
      await client.del(key);
    },
    mysql: async (pool, table, name) => {
      await pool.query(
        `CREATE TABLE IF NOT EXISTS \`${table}\` (
           name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
           token BIGINT UNSIGNED NOT NULL DEFAULT 0,
           holder VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NULL,
           seq BIGINT UNSIGNED NOT NULL DEFAULT 0
         ) ENGINE=InnoDB`,
      );
      await pool.query(`REPLACE INTO \`${table}\` (name, token, holder, seq) VALUES (?, 0, NULL, 0)`, [name]);
    },
  });
}

/** Reads what the resource holds now. */
export function readGuard(config: GuardConfig): Promise<GuardState> {
  return withStore<GuardState>(config, {
    redis: async (client, key) => {
      const h = await client.hgetall(key);
      return {
        token: Number(h.token ?? 0),
        holder: h.holder ?? null,
        seq: Number(h.seq ?? 0),
        rejected: Number(h.rejected ?? 0),
      };
    },
    mysql: async (pool, table, name) => {
      const [rows] = await pool.query<RowDataPacket[]>(`SELECT token, holder, seq FROM \`${table}\` WHERE name = ?`, [name]);
      const row = rows[0];
      return { token: Number(row?.token ?? 0), holder: (row?.holder as string | null) ?? null, seq: Number(row?.seq ?? 0), rejected: null };
    },
  });
}

/** Removes the resource (the Redis key, or the MySQL row). */
export async function dropGuard(config: GuardConfig): Promise<void> {
  await withStore(config, {
    redis: async (client, key) => {
      await client.del(key);
    },
    mysql: async (pool, table, name) => {
      await pool.query(`DELETE FROM \`${table}\` WHERE name = ?`, [name]);
    },
  });
}
