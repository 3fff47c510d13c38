import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { delay } from '@conclave/test-harness';

/**
 * Helpers for end-to-end tests of the built `conclave` binary: they spawn
 * `node packages/cli/dist/main.js …` as a user would (build first: `npx tsc --build`, which builds the backend packages it loads too).
 */

export const CLI = join(__dirname, '..', 'dist', 'main.js');

export const REDIS_URL = process.env.CONCLAVE_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const MYSQL_URL = process.env.CONCLAVE_MYSQL_URI ?? 'mysql://root@127.0.0.1:3306/test';

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npx tsc --build" first`);
}

/** A fresh election name, so tests never meet each other's leases. */
export function uniqueElection(prefix = 'cli'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

const live = new Set<ConclaveProcess>();

/** One running `conclave …` process, with its output split into lines as they arrive. */
export class ConclaveProcess {
  readonly child: ChildProcess;
  readonly stdoutLines: Array<{ line: string; at: number }> = [];
  stderr = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = '';

  constructor(readonly args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    live.add(this);
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      const at = Date.now();
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop()!;
      for (const line of parts) this.stdoutLines.push({ line, at });
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        live.delete(this);
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** JSON lines printed so far (campaign --json, watch --json). */
  events(): Array<Record<string, unknown> & { at: number }> {
    return this.stdoutLines
      .filter(({ line }) => line.startsWith('{'))
      .map(({ line, at }) => ({ ...(JSON.parse(line) as Record<string, unknown>), at }));
  }

  /** Waits for a JSON event matching `match` and returns it (with the time it was read). */
  waitForEvent(match: Record<string, unknown>, timeoutMs = 20_000): Promise<Record<string, unknown> & { at: number }> {
    return this.waitForOutput(
      () => this.events().find((e) => Object.entries(match).every(([k, v]) => e[k] === v)),
      JSON.stringify(match),
      timeoutMs,
    );
  }

  async waitForLine(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const found = await this.waitForOutput(() => this.stdoutLines.find(({ line }) => pattern.test(line)), String(pattern), timeoutMs);
    return found.line;
  }

  /** Polls `find` until it returns something; fails at once if the process exits first. */
  private async waitForOutput<T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      const problem = this.exit
        ? `exited (${JSON.stringify(this.exit)})`
        : Date.now() > until
          ? `did not print it within ${timeoutMs} ms`
          : null;
      if (problem) {
        throw new Error(
          `waiting for ${what}: conclave ${this.args.join(' ')} ${problem}; ` +
            `stdout: ${this.stdoutLines.map((l) => l.line).join(' | ')}; stderr: ${this.stderr}`,
        );
      }
      await delay(20);
    }
  }

  signal(signal: NodeJS.Signals): void {
    if (this.exit === null) this.child.kill(signal);
  }

  /** Waits for the exit, at most `timeoutMs`; fails the test with the output if it does not come. */
  async waitForExit(timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`conclave ${this.args.join(' ')} did not exit within ${timeoutMs} ms; stderr: ${this.stderr}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Starts `conclave ARGS…` in the background. */
export function startConclave(args: string[], env?: NodeJS.ProcessEnv): ConclaveProcess {
  return new ConclaveProcess(args, env);
}

/** Runs `conclave ARGS…` to the end and returns its exit code and output. */
export async function runConclave(
  args: string[],
  timeoutMs = 30_000,
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = new ConclaveProcess(args, env);
  const { code } = await p.waitForExit(timeoutMs);
  return { code, stdout: p.stdoutLines.map((l) => `${l.line}\n`).join(''), stderr: p.stderr };
}

/** SIGKILLs every conclave process still running (and SIGCONTs it first, in case it was stopped). */
export async function killAll(): Promise<void> {
  const waits: Array<Promise<unknown>> = [];
  for (const p of live) {
    try {
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    } catch {
      // gone
    }
    waits.push(p.exited);
  }
  await Promise.all(waits);
}

/** Whether `pid` is a live process (a zombie nobody reaped counts as dead). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Kills processes left by a test (CMDs that a broken run might leave behind). */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Asserts the shape of a user-error report: one `conclave: …` line on stderr, no stack, no stdout. */
export function expectOneErrorLine(result: { stdout: string; stderr: string }): string {
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^conclave: \S/);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).toBe('');
  return lines[0];
}
