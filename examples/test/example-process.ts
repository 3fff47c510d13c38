import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The examples folder: each example is started the way its README says, with `node`. */
export const EXAMPLES_DIR = join(__dirname, '..');

/** One running example process, with the lines it printed so far. */
export interface ExampleProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (printed so far or later) that matches, or rejects after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** Starts `node <file> [args]` under the examples folder with extra environment variables. */
export function startExample(file: string, env: Record<string, string>, args: string[] = []): ExampleProcess {
  const child = spawn(process.execPath, [join(EXAMPLES_DIR, file), ...args], {
    env: { ...process.env, CONCLAVE_LOG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter((l) => l.length > 0));
    for (const wake of waiters) wake();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let hasExited = false;
  exited.then(() => {
    hasExited = true;
    for (const wake of waiters) wake();
  });
  const waitForLine = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.find((l) => pattern.test(l));
        if (found === undefined) {
          if (!hasExited) return false;
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`exited with no line matching ${pattern}; got:\n${lines.join('\n')}`));
          return true;
        }
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; got:\n${lines.join('\n')}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { child, lines, waitForLine, exited };
}

/** Sends SIGKILL to every process still running and waits for them to exit. */
export async function killAll(processes: ExampleProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }),
  );
}

/** A fresh election name per test run, so runs never share a lease. */
export function uniqueElection(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now()}`;
}
