/**
 * What every peer process shares: it reads the same CONCLAVE_CANDIDATE config as a conclave
 * candidate and sends the same reports over IPC (test-harness candidate protocol), so the
 * scenarios drive peers and conclave alike. Each peer supplies only its election algorithm.
 *
 * The peers have no fencing token: each term is labelled with the monotonic instant it began
 * (an integer that grows from term to term), so "work stamped with a term older than the newest
 * one" keeps the meaning it has for conclave.
 */
import type { CandidateCommand, CandidateConfig, CandidateReport } from '@conclave/test-harness/tools';

export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

const send = (message: CandidateReport) => {
  if (process.connected) process.send!(message);
};

/** What a peer's algorithm tells the runtime. */
export interface PeerEvents {
  elected(): void;
  revoked(reason: string): void;
  /** The server holds this process's lease until `untilMs` (monotonic): last confirmed renewal + lease granted. */
  lease(untilMs: number): void;
  /** A warning worth seeing in the bench output (the peer keeps going). */
  warn(message: string): void;
}

/** One peer's election, as its public API offers it. */
export interface PeerElection {
  start(): Promise<void>;
  /** What the library (or pattern) says right now: a user's code guards its work with this. */
  isLeader(): boolean;
  /** Graceful: give the leadership up the way the library offers, and close. */
  stop(): Promise<void>;
}

export function runPeer(create: (config: CandidateConfig, events: PeerEvents) => PeerElection): void {
  const config = JSON.parse(process.env.CONCLAVE_CANDIDATE ?? '') as CandidateConfig;
  let token: number | null = null;
  let lastWarn = '';
  const events: PeerEvents = {
    elected() {
      if (token !== null) return;
      const atMs = now();
      token = Math.floor(atMs);
      send({ type: 'elected', atMs, token });
    },
    revoked(reason) {
      if (token === null) return;
      send({ type: 'revoked', atMs: now(), token, reason });
      token = null;
    },
    lease(untilMs) {
      if (token !== null) send({ type: 'lease', atMs: now(), token, untilMs });
    },
    warn(message) {
      if (message === lastWarn) return;
      lastWarn = message;
      send({ type: 'log', atMs: now(), level: 'warn', message });
    },
  };
  const election = create(config, events);

  const workIntervalMs = config.workIntervalMs ?? 10;
  const work =
    workIntervalMs > 0
      ? setInterval(() => {
          // Stamp first, then check: a true answer after the stamp covers the stamp.
          const atMs = now();
          const t = token;
          if (t !== null && election.isLeader()) send({ type: 'work', atMs, token: t });
        }, workIntervalMs)
      : null;

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (work) clearInterval(work);
    await election.stop().catch((err: unknown) => events.warn(`stop: ${(err as Error).message}`));
    events.revoked('stopped');
    send({ type: 'stopped', atMs: now() });
    if (process.connected) process.disconnect();
    // Client libraries may keep sockets or timers open; the process has nothing left to do.
    setTimeout(() => process.exit(0), 200).unref();
  };
  process.on('message', (command: CandidateCommand) => {
    if (command.type === 'stop') void stop();
  });
  process.on('SIGTERM', () => void stop());
  process.on('disconnect', () => void stop());
  election.start().then(
    () => send({ type: 'ready', atMs: now(), pid: process.pid }),
    (err: unknown) => {
      send({ type: 'error', atMs: now(), message: err instanceof Error ? err.message : String(err) });
      process.exitCode = 1;
      setTimeout(() => process.exit(1), 200).unref();
    },
  );
}
