/**
 * Small helpers shared by the bench: the monotonic clock, bounded waits, percentiles, and the
 * registry of everything the bench started so that it is all killed on exit, Ctrl-C or error.
 */
import type { ChildProcess } from 'node:child_process';

/** Milliseconds on the system monotonic clock, the same clock the candidate processes stamp with. */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects with `label` after `ms`; the bench never waits on anything without a bound. */
export function bounded<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${label}`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** Polls `test` every `everyMs` until it returns a value other than undefined/false, or throws after `ms`. */
export async function until<T>(test: () => T | undefined | false, ms: number, label: string, everyMs = 5): Promise<T> {
  const end = nowMs() + ms;
  for (;;) {
    const v = test();
    if (v !== undefined && v !== false) return v;
    if (nowMs() > end) throw new Error(`timed out after ${ms} ms: ${label}`);
    await sleep(everyMs);
  }
}

export interface Summary {
  n: number;
  min: number | null;
  p50: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Nearest-rank percentile of a sample (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    min: s.length ? s[0]! : null,
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    max: s.length ? s[s.length - 1]! : null,
    mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : null,
  };
}

export const round = (v: number | null | undefined, digits = 1): number | null =>
  v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 10 ** digits) / 10 ** digits;

// ---- everything started by the bench -------------------------------------------------------

const children = new Set<ChildProcess>();
const closers = new Set<() => Promise<void>>();

/** Registers a child process: SIGKILLed (after SIGCONT, in case it is frozen) on cleanup. */
export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** Registers an async closer (servers, proxies); returns the function that unregisters it. */
export function onCleanup(close: () => Promise<void>): () => void {
  closers.add(close);
  return () => closers.delete(close);
}

function killChildrenNow(): void {
  for (const child of children) {
    try {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Kills every tracked child and runs every closer (each bounded). */
export async function cleanupAll(): Promise<void> {
  killChildrenNow();
  const all = [...closers];
  closers.clear();
  await Promise.all(all.map((close) => bounded(close(), 20_000, 'cleanup').catch(() => undefined)));
  killChildrenNow();
}

/** Ctrl-C, SIGTERM, uncaught errors and a plain exit all end what the bench started. */
export function installExitHandlers(): void {
  let cleaning = false;
  const bail = (code: number, why: string) => {
    if (cleaning) return;
    cleaning = true;
    console.error(`\nbench: ${why}; stopping everything it started…`);
    void cleanupAll().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => bail(130, 'interrupted'));
  process.on('SIGTERM', () => bail(143, 'terminated'));
  process.on('uncaughtException', (err) => {
    console.error(err);
    bail(1, 'uncaught exception');
  });
  process.on('unhandledRejection', (err) => {
    console.error(err);
    bail(1, 'unhandled rejection');
  });
  process.on('exit', killChildrenNow);
}
