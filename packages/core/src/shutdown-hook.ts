import type { Elector } from './elector';
import { ConclaveError } from './errors';
import { assertOptionKeys, optionKeys } from './option-keys';
import { assertPositiveInteger, describe } from './validation';

/** The exit code of a second signal during the shutdown (as a shell reports an interrupt). */
export const FORCED_EXIT_CODE = 130;

/** Options of `installShutdownHook(electors, options)`. */
export interface ShutdownHookOptions {
  /** Signals that trigger the shutdown. Default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
  /**
   * Exit the process once every Elector has stopped and `onStopped` has settled: code 0, or 1 if
   * `onStopped` failed. A second signal meanwhile exits at once with 130. Default true.
   */
  exit?: boolean;
  /** Longest wait for the Electors to stop and `onStopped` to settle before exiting anyway (with `exit`, code 0), ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * Called once every Elector has stopped, before exiting (with `exit`); a promise it returns is
   * awaited — close backends, flush logs. Its failure makes the exit code 1 (without `exit`, it
   * is ignored: report it inside `onStopped`).
   */
  onStopped?: () => void | Promise<void>;
}

const SHUTDOWN_HOOK_OPTION_KEYS = optionKeys<ShutdownHookOptions>({ signals: true, exit: true, timeoutMs: true, onStopped: true });

/**
 * Opt-in graceful shutdown (a JVM-style shutdown hook): on SIGTERM/SIGINT, stop every Elector —
 * each aborts its term's signal, awaits its `whileLeader` tasks (up to the term's deadline) and
 * releases its lease — so a rolling restart hands over in milliseconds instead of a lease, and
 * never mid-task; then await `onStopped` and exit. A second signal exits at once (with
 * `exit`). Throws `INVALID_OPTIONS` for bad options. Returns a function that removes the handlers.
 */
export function installShutdownHook(electors: Elector | Elector[], options: ShutdownHookOptions = {}): () => void {
  assertOptionKeys(options, SHUTDOWN_HOOK_OPTION_KEYS, 'shutdown hook options');
  const list = Array.isArray(electors) ? electors : [electors];
  if (list.length === 0 || list.some((e) => typeof e !== 'object' || e === null || typeof e.stop !== 'function')) {
    throw new ConclaveError('INVALID_OPTIONS', 'installShutdownHook needs an Elector or a non-empty array of Electors');
  }
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  if (!Array.isArray(signals) || signals.length === 0 || signals.some((s) => typeof s !== 'string')) {
    throw new ConclaveError('INVALID_OPTIONS', `signals must be a non-empty array of signal names, got ${describe(signals)}`);
  }
  const exit = options.exit ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  assertPositiveInteger(timeoutMs, 'timeoutMs');
  const onStopped = options.onStopped;
  if (onStopped !== undefined && typeof onStopped !== 'function') {
    throw new ConclaveError('INVALID_OPTIONS', `onStopped must be a function, got ${describe(onStopped)}`);
  }

  let shuttingDown = false;
  const onSignal = () => {
    if (shuttingDown) {
      // The operator insists (a second Ctrl-C): leave now; unreleased leases expire on the server.
      if (exit) process.exit(FORCED_EXIT_CODE);
      return;
    }
    shuttingDown = true;
    const timer = exit ? setTimeout(() => process.exit(0), timeoutMs) : null;
    timer?.unref();
    void (async () => {
      // Elector.stop() never rejects.
      await Promise.all(list.map((e) => e.stop()));
      let code = 0;
      try {
        await onStopped?.();
      } catch {
        code = 1;
      }
      if (timer) clearTimeout(timer);
      if (exit) process.exit(code);
    })();
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
