import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { join } from 'node:path';
import { monotonicMs, type ExitCause, type FromSupervisor, type ToSupervisor } from './supervisor-protocol';

/** How often conclave passes the current lease deadline to the supervisor, ms. */
export const HEARTBEAT_MS = 50;

export type CommandOutcome =
  | { kind: 'exited'; cause: ExitCause; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'spawn-error'; code: string; message: string }
  /** The supervisor died without reporting (killed); CMD's group was SIGKILLed by conclave. */
  | { kind: 'supervisor-died' };

export interface SupervisedCommandOptions {
  command: string;
  args: string[];
  graceMs: number;
  /** Extra environment for CMD. */
  env: Record<string, string>;
  /** The current lease deadline (monotonicMs), or null when this process no longer leads. */
  deadline: () => number | null;
}

/**
 * conclave's side of one CMD run: spawns the supervisor (see supervisor.ts), passes it the lease
 * deadline every HEARTBEAT_MS while leading, and resolves `done` once CMD and its group are gone.
 */
export class SupervisedCommand {
  readonly done: Promise<CommandOutcome>;
  private readonly proc: ChildProcess;
  private heartbeat: NodeJS.Timeout | null = null;
  private lastDeadline = 0;
  private pgid: number | null = null;
  private outcome: CommandOutcome | null = null;

  constructor(private readonly options: SupervisedCommandOptions) {
    const deadline = options.deadline();
    this.proc = spawn(process.execPath, [join(__dirname, 'supervisor.js')], {
      // Its own process group: a SIGSTOP, SIGTSTP (Ctrl-Z) or group kill aimed at conclave does not
      // stop the supervisor, which is what must act when conclave cannot.
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.done = new Promise<CommandOutcome>((resolve) => {
      this.proc.on('message', (message: FromSupervisor) => {
        if (message.type === 'started') this.pgid = message.pid;
        else if (message.type === 'exited') {
          this.outcome = { kind: 'exited', cause: message.cause, code: message.code, signal: message.signal };
        } else if (message.type === 'spawn-error') {
          this.outcome = { kind: 'spawn-error', code: message.code, message: message.message };
        }
      });
      this.proc.once('exit', () => {
        this.stopHeartbeat();
        if (!this.outcome) {
          // The supervisor was killed: do its job ourselves.
          this.killGroup();
          this.outcome = { kind: 'supervisor-died' };
        }
        resolve(this.outcome);
      });
      this.proc.once('error', () => {
        // Could not even start node: reported as a dead supervisor on 'exit' (or here if none comes).
        this.stopHeartbeat();
        resolve(this.outcome ?? { kind: 'supervisor-died' });
      });
    });
    this.post({
      type: 'start',
      command: options.command,
      args: options.args,
      graceMs: options.graceMs,
      deadline: deadline ?? monotonicMs(),
      env: options.env,
    });
    this.lastDeadline = deadline ?? 0;
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
  }

  /** Asks the supervisor to stop CMD: SIGTERM, then SIGKILL after the grace period. */
  stop(): void {
    this.stopHeartbeat();
    this.post({ type: 'stop' });
  }

  /** SIGKILL CMD's group and the supervisor, now (a forced exit). */
  kill(): void {
    this.stopHeartbeat();
    this.killGroup();
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  private beat(): void {
    const deadline = this.options.deadline();
    // Only a later deadline is news; a null one means leadership ended and `stop()` follows.
    if (deadline !== null && deadline > this.lastDeadline + 1) {
      this.lastDeadline = deadline;
      this.post({ type: 'lease', deadline });
    }
  }

  private post(message: ToSupervisor): void {
    if (!this.proc.connected) return;
    this.proc.send(message, (err) => {
      // The channel closed meanwhile: the supervisor is exiting; 'exit' tells the rest.
      void err;
    });
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private killGroup(): void {
    if (this.pgid === null) return;
    try {
      process.kill(-this.pgid, 'SIGKILL');
    } catch {
      // ESRCH: nothing left
    }
  }
}

/** CMD's outcome as an exit code, like a shell: its code, or 128 + the signal number. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal) {
    const n = constants.signals[signal];
    if (typeof n === 'number') return 128 + n;
  }
  return 1;
}
