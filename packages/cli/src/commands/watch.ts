import type { ElectionBackend, LeaderInfo } from '@conclave/core/spi';
import type { ParsedCommand } from '../cli-args';
import { EXIT } from '../cli-errors';
import { onShutdownSignals, warnLine, writeLine } from '../cli-context';
import { withBackend } from './admin';

/** How often a backend without push is read, ms (`--interval-ms`). */
export const DEFAULT_WATCH_INTERVAL_MS = 500;
/**
 * With best-effort push, the leader is also read at least this often, ms (or every --interval-ms
 * when that is longer): a change whose hint was lost (a dropped connection) or never sent (a
 * lease that ran out) shows within it.
 */
export const PUSH_FALLBACK_MS = 5_000;

/** The longest delay a Node timer keeps, ms. */
const LONGEST_TIMER_MS = 2_147_483_647;

/** When `conclave watch` reads the leader, for a backend and `--interval-ms`. */
export interface WatchPacing {
  /** Whether hints from `watchLeader` trigger reads. */
  push: boolean;
  /** Longest wait between two reads while the backend answers, ms; null: only on a hint. */
  idleMs: number | null;
  /** Wait before reading again after a failed read, ms. */
  retryMs: number;
}

export function watchPacing(backend: ElectionBackend, intervalMs = DEFAULT_WATCH_INTERVAL_MS): WatchPacing {
  const leaderPush = backend.leaderChanges?.delivery;
  if (leaderPush === undefined) return { push: false, idleMs: intervalMs, retryMs: intervalMs };
  // A reliable backend announces every change, reconnects included: no read without a hint.
  // While reads fail, hints may be what is missing, so retry as a poller would (or sooner).
  return {
    push: true,
    idleMs: leaderPush === 'reliable' ? null : Math.max(PUSH_FALLBACK_MS, intervalMs),
    retryMs: Math.min(intervalMs, PUSH_FALLBACK_MS),
  };
}

export interface FollowOptions {
  backend: ElectionBackend;
  election: string;
  pacing: WatchPacing;
  /** Called with the leader first read, then with each change. */
  onLeader: (leader: LeaderInfo | null) => void;
  /** Called once when reads start failing, with the error, and once when they succeed again (null). */
  onOutage: (err: unknown | null) => void;
  /** Ends the loop (the promise then resolves). */
  signal: AbortSignal;
}

/**
 * Reads the leader on each hint (with push) or timer, and reports it when it changed. The first
 * read must succeed (its error is thrown); later failures are reported through `onOutage`.
 */
export async function followLeader({ backend, election, pacing, onLeader, onOutage, signal }: FollowOptions): Promise<void> {
  const wakeUp = new Wakeup(signal);
  // Subscribed before the first read, so no change falls between the two.
  const unwatch = pacing.push && backend.leaderChanges ? backend.leaderChanges.watch(election, () => wakeUp.hint()) : () => undefined;
  try {
    let last = await backend.getLeader(election);
    onLeader(last);
    let failing = false;
    while (await wakeUp.next(failing ? pacing.retryMs : pacing.idleMs)) {
      let now: LeaderInfo | null;
      try {
        now = await backend.getLeader(election);
      } catch (err) {
        if (!failing) onOutage(err);
        failing = true;
        continue;
      }
      if (failing) onOutage(null);
      failing = false;
      if (now?.candidateId !== last?.candidateId || now?.token !== last?.token) onLeader(now);
      last = now;
    }
  } finally {
    unwatch();
    wakeUp.close();
  }
}

/**
 * `conclave watch`: prints the leader, then each change until SIGINT/SIGTERM. Where the backend
 * declares `leaderPush`, the leader is read again on each hint (plus every PUSH_FALLBACK_MS when
 * hints can be lost); otherwise it is polled every --interval-ms. The first read must succeed
 * (else exit 1); later failures are reported once per outage on stderr and retried.
 */
export function watchCommand(parsed: ParsedCommand): Promise<number> {
  return withBackend(parsed, async ({ backend, election }) => {
    const pacing = watchPacing(backend, parsed.intervalMs);
    const stopped = new AbortController();
    const removeSignals = onShutdownSignals(
      () => stopped.abort(),
      () => process.exit(EXIT.INTERRUPTED),
    );
    try {
      await followLeader({
        backend,
        election,
        pacing,
        signal: stopped.signal,
        onLeader: (leader) => {
          if (parsed.json) {
            writeLine(JSON.stringify({ event: 'leader', election, leaderId: leader?.candidateId ?? null, token: leader?.token ?? null }));
          } else {
            const at = new Date().toISOString();
            writeLine(leader ? `${at} "${election}" is led by ${leader.candidateId} (token ${leader.token})` : `${at} "${election}" has no leader`);
          }
        },
        onOutage: (err) => {
          if (err === null) warnLine('backend reachable again');
          else warnLine(`${err instanceof Error ? err.message : String(err)} (retrying every ${pacing.retryMs} ms)`);
        },
      });
    } finally {
      removeSignals();
    }
    return EXIT.OK;
  });
}

/** Wakes the read loop on a hint, a timer or the signal; a hint that comes during a read is kept. */
class Wakeup {
  private hinted = false;
  private wake: (() => void) | null = null;
  private readonly onAbort = () => this.wake?.();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort);
  }

  hint(): void {
    this.hinted = true;
    this.wake?.();
  }

  /** Resolves true when it is time to read (a hint, or `timeoutMs` passed), false once aborted. */
  async next(timeoutMs: number | null): Promise<boolean> {
    if (!this.signal.aborted && !this.hinted) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        // Without a timeout, a timer that never fires still keeps the process up between hints:
        // a pending promise alone does not, and a reconnecting client may hold no other handle.
        timer = timeoutMs === null ? setTimeout(() => undefined, LONGEST_TIMER_MS) : setTimeout(resolve, timeoutMs);
      });
      this.wake = null;
      clearTimeout(timer);
    }
    this.hinted = false;
    return !this.signal.aborted;
  }

  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
