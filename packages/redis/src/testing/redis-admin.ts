import Redis from 'ioredis';

/**
 * One command on a short-lived connection of its own to a private server (or Sentinel) on
 * 127.0.0.1, for a test environment's housekeeping: no retries, no offline queue, so a server
 * that is down fails the call at once.
 */
export function adminCall(port: number, ...args: string[]): Promise<unknown> {
  return adminSession(port, (call) => call(...args));
}

/** Several commands on one short-lived connection (one that stays logged in when the server's password changes). */
export async function adminSession<T>(port: number, work: (call: (...args: string[]) => Promise<unknown>) => Promise<T>): Promise<T> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work((...args) => client.call(args[0]!, ...args.slice(1)));
  } finally {
    client.disconnect();
  }
}

/** A field of `INFO <section>` (`role`, `master_port`, …), or null when absent or unreachable. */
export async function infoField(port: number, section: string, field: string): Promise<string | null> {
  const info = await adminCall(port, 'INFO', section).catch(() => null);
  if (typeof info !== 'string') return null;
  return new RegExp(`^${field}:(\\S+)`, 'm').exec(info)?.[1] ?? null;
}

/** A Sentinel reply of one instance (`[key, value, key, value, …]`) as an object. */
export function sentinelRecord(reply: unknown): Record<string, string> {
  const list = Array.isArray(reply) ? (reply as unknown[]).map(String) : [];
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) record[list[i]!] = list[i + 1]!;
  return record;
}

/** Polls `check` every 50 ms until it is true; rejects after `timeoutMs` naming `what`, or once `cancelled()`. */
export async function pollUntil(check: () => Promise<boolean>, timeoutMs: number, what: string, cancelled = () => false): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (cancelled()) throw new Error(`gave up waiting for ${what}: closed`);
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
