/**
 * The supervisor of `conclave run`: a small Node process between conclave and CMD whose only job
 * is to make sure CMD never runs when this candidate may no longer lead.
 *
 *   conclave (Elector)  ──IPC──▶  supervisor (own process group)  ──▶  CMD (own process group)
 *
 * - It holds the lease deadline (an absolute reading of the host's monotonic clock) and gets a
 *   later one after each renewal. If no later deadline comes — conclave is frozen (GC pause,
 *   SIGSTOP), or the backend does not answer — it sends SIGTERM to CMD's group `graceMs` before
 *   the deadline and SIGKILL at the deadline. conclave's deadline is `safetyMarginMs` before the
 *   server can let the lease go, so CMD is dead before another leader can be elected.
 * - If conclave dies (even by SIGKILL) the IPC channel closes: SIGTERM at once, SIGKILL after the
 *   grace period (never after the deadline).
 * - It runs in its own process group, so a signal (or a SIGSTOP/SIGTSTP) sent to conclave's group
 *   does not reach it; CMD runs in another group, so that every signal reaches all of CMD's
 *   processes (a shell pipeline, a job's children).
 *
 * Not meant to be started by hand; `conclave run` spawns it with an IPC channel.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { monotonicMs, type ExitCause, type FromSupervisor, type StartMessage, type ToSupervisor } from './supervisor-protocol';

/** How often to look whether CMD's process group is empty after CMD itself exited, ms. */
const GROUP_POLL_MS = 25;

let child: ChildProcess | null = null;
let pgid: number | null = null;
let graceMs = 0;
let deadline = 0;
/** Set once we decided to stop CMD (or CMD exited on its own); never changes after. */
let cause: ExitCause | null = null;
let childExit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
let termTimer: NodeJS.Timeout | null = null;
let deadlineTimer: NodeJS.Timeout | null = null;
let killTimer: NodeJS.Timeout | null = null;
let killSent = false;
let finished = false;

function send(message: FromSupervisor, then?: () => void): void {
  if (process.connected && process.send) {
    process.send(message, undefined, {}, () => then?.());
  } else {
    then?.();
  }
}

function signalGroup(signal: NodeJS.Signals): void {
  if (pgid === null) return;
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function groupAlive(): boolean {
  if (pgid === null) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function clearTimers(): void {
  for (const t of [termTimer, deadlineTimer]) if (t) clearTimeout(t);
  termTimer = null;
  deadlineTimer = null;
}

/** (Re)arms the deadline timers: SIGTERM at deadline − grace, SIGKILL at the deadline. */
function armDeadline(): void {
  clearTimers();
  const now = monotonicMs();
  termTimer = setTimeout(() => terminate('deadline'), Math.max(0, deadline - graceMs - now));
  deadlineTimer = setTimeout(killNow, Math.max(0, deadline - now));
}

function killNow(): void {
  killSent = true;
  signalGroup('SIGKILL');
}

/** SIGTERM to CMD's group now; SIGKILL after the grace period or at the deadline, whichever is first. */
function terminate(why: ExitCause): void {
  if (cause !== null) return;
  cause = why;
  if (termTimer) clearTimeout(termTimer);
  termTimer = null;
  if (pgid === null) {
    // Nothing started (yet): there is nothing to stop.
    finish();
    return;
  }
  signalGroup('SIGTERM');
  killTimer = setTimeout(killNow, Math.max(0, Math.min(graceMs, deadline - monotonicMs())));
  waitForGroup();
}

/**
 * Once CMD has exited, waits until nothing is left in its process group, then reports. After
 * SIGKILL a member still listed a second later is a zombie that nobody reaps: stop waiting.
 */
function waitForGroup(): void {
  if (childExit === null) return; // the 'exit' handler calls us again
  if (!groupAlive()) {
    finish();
    return;
  }
  if (killSent) {
    killedAt ??= monotonicMs();
    if (monotonicMs() - killedAt > 1000) {
      finish();
      return;
    }
  }
  setTimeout(waitForGroup, GROUP_POLL_MS);
}

let killedAt: number | null = null;

function finish(): void {
  if (finished) return;
  finished = true;
  clearTimers();
  if (killTimer) clearTimeout(killTimer);
  send(
    { type: 'exited', cause: cause ?? 'self', code: childExit?.code ?? null, signal: childExit?.signal ?? null },
    () => process.exit(0),
  );
}

function start(message: StartMessage): void {
  if (child || cause !== null) return;
  graceMs = message.graceMs;
  deadline = message.deadline;
  if (monotonicMs() >= deadline - graceMs) {
    // The term is (nearly) over already: do not start CMD only to stop it.
    cause = 'deadline';
    finish();
    return;
  }
  const proc = spawn(message.command, message.args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true, // its own process group (setsid), so we can signal all of CMD's processes
    env: { ...process.env, ...message.env },
  });
  child = proc;
  proc.once('error', (err: NodeJS.ErrnoException) => {
    if (proc.pid !== undefined) return; // a kill() failure after start; the exit handler reports
    cause = 'self';
    finished = true;
    clearTimers();
    send({ type: 'spawn-error', code: err.code ?? 'UNKNOWN', message: err.message }, () => process.exit(0));
  });
  if (proc.pid === undefined) return; // 'error' follows
  pgid = proc.pid;
  send({ type: 'started', pid: proc.pid });
  armDeadline();
  proc.once('exit', (code, signal) => {
    childExit = { code, signal };
    if (cause === null) {
      // CMD exited on its own; stop whatever it left behind in its group, then report.
      cause = 'self';
      if (termTimer) clearTimeout(termTimer);
      termTimer = null;
      if (groupAlive()) {
        signalGroup('SIGTERM');
        killTimer = setTimeout(killNow, Math.max(0, Math.min(graceMs, deadline - monotonicMs())));
      }
    }
    waitForGroup();
  });
}

process.on('message', (message: ToSupervisor) => {
  switch (message.type) {
    case 'start':
      start(message);
      break;
    case 'lease':
      // Only ever later, and only while CMD is meant to run.
      if (cause === null && child && message.deadline > deadline) {
        deadline = message.deadline;
        armDeadline();
      }
      break;
    case 'stop':
      terminate('stop');
      break;
  }
});

// conclave is gone (exited, crashed, SIGKILLed): nobody renews the lease any more.
process.on('disconnect', () => {
  if (!child) {
    process.exit(0);
  }
  terminate('stop');
});

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(signal, () => terminate('signal'));
}

if (!process.send) {
  process.stderr.write('conclave: the supervisor is started by "conclave run", not by hand\n');
  process.exit(2);
}
