/**
 * Messages between `conclave run` and its supervisor process, over the Node IPC channel.
 *
 * Times are absolute readings of the host's monotonic clock in ms (`monotonicMs()`): the
 * supervisor and conclave run on the same host, and on Linux `process.hrtime` reads
 * CLOCK_MONOTONIC, which all processes share. Sending the deadline itself (not "time left") means
 * a message that is delayed on the way can only make the supervisor act *earlier* than needed.
 */

/** conclave → supervisor, first message: what to run and when the current term ends. */
export interface StartMessage {
  type: 'start';
  command: string;
  args: string[];
  /** Time between SIGTERM and SIGKILL, ms. */
  graceMs: number;
  /** The lease deadline (monotonicMs): CMD must be dead by then unless a later one arrives. */
  deadline: number;
  /** For CMD's environment: CONCLAVE_ELECTION, CONCLAVE_ID, CONCLAVE_TOKEN. */
  env: Record<string, string>;
}

/** conclave → supervisor: the lease was renewed; the new deadline (monotonicMs). */
export interface LeaseMessage {
  type: 'lease';
  deadline: number;
}

/** conclave → supervisor: stop CMD now (SIGTERM, SIGKILL after graceMs, never after the deadline). */
export interface StopMessage {
  type: 'stop';
}

export type ToSupervisor = StartMessage | LeaseMessage | StopMessage;

/** Why CMD ended. */
export type ExitCause =
  /** CMD exited on its own. */
  | 'self'
  /** conclave asked (leadership lost, or conclave is shutting down). */
  | 'stop'
  /** The lease deadline came without a renewal (conclave frozen, or the backend unreachable). */
  | 'deadline'
  /** The supervisor itself got SIGTERM/SIGINT/SIGHUP. */
  | 'signal';

/** supervisor → conclave: CMD is running as the leader of process group `pid`. */
export interface StartedMessage {
  type: 'started';
  pid: number;
}

/** supervisor → conclave: CMD could not be started (`code` is the errno code, e.g. ENOENT). */
export interface SpawnErrorMessage {
  type: 'spawn-error';
  code: string;
  message: string;
}

/** supervisor → conclave: CMD (and its process group) is gone. The supervisor exits next. */
export interface ExitedMessage {
  type: 'exited';
  cause: ExitCause;
  /** CMD's exit code, or null when it was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type FromSupervisor = StartedMessage | SpawnErrorMessage | ExitedMessage;

/** The host's monotonic clock, ms (CLOCK_MONOTONIC on Linux, shared by every process). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
