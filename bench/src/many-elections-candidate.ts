/**
 * One process, N Electors on one backend (the "many elections" scenario). Forked by the bench
 * with its settings as JSON in CONCLAVE_BENCH_MANY. Reports to the parent over IPC:
 * - `ready` once every Elector knows its first outcome;
 * - `events`: batches of [kind, election index, atMs, token, reason] (elected/revoked), every 50 ms;
 * - `stats` every second and when asked: cumulative CPU (process.cpuUsage, µs), RSS, heap,
 *   how many elections it leads, and revocations by reason;
 * - `memory` when asked: RSS and heap just after a full garbage collection (when the process runs
 *   with --expose-gc), to compare with the baseline that `ready` carries (the same, taken before
 *   the process built its Electors).
 * Times are process.hrtime.bigint() in ms, the clock shared with the parent.
 */
import { Elector } from '@conclave/core';
import { createBackend } from '@conclave/cli';

export interface ManyConfig {
  backend: string;
  /** Election names are `${prefix}-${i}` for i in 0..count-1. */
  prefix: string;
  count: number;
  candidateId: string;
  leaseMs: number;
}

export type ManyEvent = [kind: 'e' | 'r', index: number, atMs: number, token: number, reason: string];

/** Memory of the process, bytes: `rss` and V8's `heapUsed`. */
export interface ManyMemory {
  rssBytes: number;
  heapBytes: number;
  /** Whether a full garbage collection ran just before (the process has --expose-gc). */
  collected: boolean;
}

export type ManyReport =
  | { type: 'ready'; atMs: number; pid: number; startMs: number; baseline: ManyMemory }
  | ({ type: 'memory'; atMs: number } & ManyMemory)
  | { type: 'events'; list: ManyEvent[] }
  | {
      type: 'stats';
      atMs: number;
      cpuUs: number;
      rssBytes: number;
      heapBytes: number;
      leading: number;
      elected: number;
      revoked: Record<string, number>;
    }
  | { type: 'error'; atMs: number; message: string }
  | { type: 'stopped'; atMs: number };

export type ManyCommand = { type: 'stats' } | { type: 'memory' } | { type: 'stop' };

const now = () => Number(process.hrtime.bigint()) / 1e6;
const send = (m: ManyReport) => {
  if (process.connected) process.send!(m);
};

/** Memory after a full collection when the process may run one, so that garbage does not count. */
function memoryNow(): ManyMemory {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const mem = process.memoryUsage();
  return { rssBytes: mem.rss, heapBytes: mem.heapUsed, collected: gc !== undefined };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CONCLAVE_BENCH_MANY ?? '') as ManyConfig;
  const backend = createBackend(config.backend);
  // What the process holds before its Electors: what they add is measured against it.
  const baseline = memoryNow();
  const electors: Elector[] = [];
  let pending: ManyEvent[] = [];
  let elected = 0;
  const revoked: Record<string, number> = {};
  for (let i = 0; i < config.count; i++) {
    const elector = new Elector({
      backend,
      election: `${config.prefix}-${i}`,
      candidateId: config.candidateId,
      leaseMs: config.leaseMs,
    });
    elector.elected$.subscribe((e) => {
      elected++;
      pending.push(['e', i, now(), e.token, '']);
    });
    elector.revoked$.subscribe((e) => {
      revoked[e.reason] = (revoked[e.reason] ?? 0) + 1;
      pending.push(['r', i, now(), e.token, e.reason]);
    });
    electors.push(elector);
  }
  const flush = setInterval(() => {
    if (pending.length === 0) return;
    const list = pending;
    pending = [];
    send({ type: 'events', list });
  }, 50);
  const stats = () => {
    const cpu = process.cpuUsage();
    const mem = process.memoryUsage();
    let leading = 0;
    for (const e of electors) if (e.isLeader()) leading++;
    send({
      type: 'stats',
      atMs: now(),
      cpuUs: cpu.user + cpu.system,
      rssBytes: mem.rss,
      heapBytes: mem.heapUsed,
      leading,
      elected,
      revoked: { ...revoked },
    });
  };
  const statsTimer = setInterval(stats, 1000);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(statsTimer);
    const hardExit = setTimeout(() => process.exit(0), 20_000);
    await Promise.all(electors.map((e) => e.stop()));
    await backend.close().catch(() => undefined);
    clearInterval(flush);
    send({ type: 'stopped', atMs: now() });
    clearTimeout(hardExit);
    process.disconnect?.();
  };
  process.on('message', (command: ManyCommand) => {
    if (command.type === 'stats') stats();
    else if (command.type === 'memory') send({ type: 'memory', atMs: now(), ...memoryNow() });
    else if (command.type === 'stop') void stop();
  });
  process.on('SIGTERM', () => void stop());
  process.on('disconnect', () => void stop());

  const startMs = now();
  // All in one turn: their first campaigns go out together and the backend batches them.
  await Promise.all(electors.map((e) => e.start()));
  send({ type: 'ready', atMs: now(), pid: process.pid, startMs: now() - startMs, baseline });
}

main().catch((err: unknown) => {
  send({ type: 'error', atMs: now(), message: err instanceof Error ? err.message : String(err) });
  process.exitCode = 1;
});
