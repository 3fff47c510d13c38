import type { KeyspaceEventsMode } from './redis-options';

/** What a master's keyspace check found: `on`, `off` (not set, and not configured), `refused` (CONFIG refused), or not known yet. */
export type KeyspaceStatus = 'on' | 'off' | 'refused' | 'unknown';

/** `K` (keyspace channels) and the generic commands' events (`g`, or `A` for all). */
export function keyspaceFlagsSuffice(flags: string): boolean {
  return flags.includes('K') && (flags.includes('g') || flags.includes('A'));
}

/** `flags` with `K`, `g` and `x` added (what 'configure' sets). */
export function withKeyspaceFlags(flags: string): string {
  let out = flags;
  for (const f of ['K', 'g', 'x']) if (!out.includes(f) && !(f !== 'K' && out.includes('A'))) out += f;
  return out;
}

/** How a `KeyspaceCheck` reaches its master (the node's command connection). */
export interface KeyspaceCommands {
  /** Resolves once the command connection is ready; rejects when the master cannot be reached. */
  ready(): Promise<void>;
  /** Sends one command: its reply error (the server's answer) or its value. */
  command(args: string[]): Promise<Array<[Error | null, unknown]>>;
  /** Keeps an error for the backend's messages. */
  noteError(err: unknown): void;
}

/**
 * Whether one master sends the keyspace events a quiet follower needs (`K` and `g`, or `K` and
 * `A`, in `notify-keyspace-events`).
 */
export class KeyspaceCheck {
  /** What the last check found. */
  status: KeyspaceStatus = 'unknown';
  private answer: Promise<boolean> | null = null;

  constructor(private readonly io: KeyspaceCommands) {}

  /**
   * Read with `CONFIG GET`, and with `mode` 'configure' turned on with `CONFIG SET` when they are
   * not. A refused `CONFIG` (managed Redis, an ACL without `+config`) means no. The answer is kept;
   * a failure to reach the server is not, and is asked again on the next call. Never rejects.
   */
  events(mode: KeyspaceEventsMode): Promise<boolean> {
    if (mode === 'off') return Promise.resolve(false);
    if (!this.answer) {
      const check = this.check(mode).catch((err: unknown) => {
        this.io.noteError(err);
        if (this.answer === check) this.answer = null;
        return false;
      });
      this.answer = check;
    }
    return this.answer;
  }

  /** Forgets the kept answer: the next `events` asks the server again (a restart loses a `CONFIG SET`). */
  forget(): void {
    this.answer = null;
  }

  private async check(mode: KeyspaceEventsMode): Promise<boolean> {
    await this.io.ready();
    const [[getErr, reply]] = await this.io.command(['config', 'get', 'notify-keyspace-events']);
    if (getErr) return this.refused(getErr);
    const flags = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : '';
    if (keyspaceFlagsSuffice(flags)) {
      this.status = 'on';
      return true;
    }
    if (mode !== 'configure') {
      this.status = 'off';
      return false;
    }
    const [[setErr]] = await this.io.command(['config', 'set', 'notify-keyspace-events', withKeyspaceFlags(flags)]);
    if (setErr) return this.refused(setErr);
    this.status = 'on';
    return true;
  }

  /** A reply error is the server's answer (kept); anything else is a failure to reach it (thrown). */
  private refused(err: unknown): boolean {
    if (!(err instanceof Error) || err.name !== 'ReplyError') throw err;
    this.io.noteError(err);
    this.status = 'refused';
    return false;
  }
}
