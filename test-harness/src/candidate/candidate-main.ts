/**
 * One Elector in its own process, for fault tests and benchmarks. Started by `CandidateProcess`
 * with `fork()`; reports every transition and every unit of work to the parent over IPC,
 * timestamped on the system monotonic clock. Work is done only while `isLeader()` is true, the
 * way a user's code should guard it. With a `guard` in its config it also writes its fencing
 * token to a guarded resource while it leads, and reports each verdict.
 */
import { ConclaveError, Elector, createBackend, type Logger } from '@conclave/core';
import { forwardBackend, type ElectionBackend } from '@conclave/core/spi';
import { openGuard } from '../guard/guarded-resource';
import { loadProviders } from './candidate-providers';
import { DEFAULT_PROVIDER_MODULES, type CandidateCommand, type CandidateConfig, type CandidateReport } from './candidate-protocol';

const now = () => Number(process.hrtime.bigint()) / 1e6;
const report = (message: CandidateReport) => {
  if (process.connected) process.send!(message);
};

/**
 * The backend, observed: every lease granted or extended is reported (`lease`) before the Elector
 * sees the answer, so the parent knows the latest instant at which `isLeader()` can be true even
 * if this process is frozen or killed right after. Behaviour is unchanged: the whole SPI is passed
 * on by core's `forwardBackend`, optional methods included.
 */
function observeLeases(backend: ElectionBackend, safetyMarginMs: () => number, leaseMs: number): ElectionBackend {
  return forwardBackend(backend, {
    campaign: async (next, request) => {
      const sentAt = now();
      const result = await next(request);
      if (result.role === 'leader') {
        const untilMs = sentAt + Math.min(result.leaseMs, leaseMs) - safetyMarginMs();
        report({ type: 'lease', atMs: now(), token: result.token, untilMs });
      }
      return result;
    },
    renew: async (next, request) => {
      const sentAt = now();
      const result = await next(request);
      if (result.held) {
        const untilMs = sentAt + Math.min(result.leaseMs, leaseMs) - safetyMarginMs();
        report({ type: 'lease', atMs: now(), token: request.token, untilMs });
      }
      return result;
    },
  });
}

/**
 * The Elector's warnings and errors, reported to the parent (`log`), so that a run in which
 * nobody ever leads can say why (a backend refusing every call, say). A message repeated within
 * a second is reported once.
 */
function reportingLogger(): Logger {
  let last = '';
  let lastAt = -Infinity;
  const forward = (level: 'warn' | 'error') => (context: object, message: string) => {
    const err = (context as { err?: unknown }).err;
    const text = err instanceof Error ? `${message}: ${err.message}` : message;
    const code = err instanceof ConclaveError ? err.code : undefined;
    const atMs = now();
    if (text === last && atMs - lastAt < 1000) return;
    last = text;
    lastAt = atMs;
    report({ type: 'log', atMs, level, message: text, ...(code ? { code } : {}) });
  };
  return { debug: () => undefined, info: () => undefined, warn: forward('warn'), error: forward('error') };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CONCLAVE_CANDIDATE ?? '') as CandidateConfig;
  const raw = createBackend(config.backend, await loadProviders(config.providers ?? DEFAULT_PROVIDER_MODULES));
  let margin = 0;
  const backend = config.reportLeases === false ? raw : observeLeases(raw, () => margin, config.leaseMs);
  const elector = new Elector({
    backend,
    election: config.election,
    candidateId: config.candidateId,
    leaseMs: config.leaseMs,
    ...(config.renewMs ? { renewMs: config.renewMs } : {}),
    ...(config.retryMs ? { retryMs: config.retryMs } : {}),
    logger: reportingLogger(),
  });
  margin = elector.options.safetyMarginMs;
  elector.elected$.subscribe((e) => report({ type: 'elected', atMs: now(), token: e.token }));
  elector.revoked$.subscribe((e) => report({ type: 'revoked', atMs: now(), token: e.token, reason: e.reason }));
  elector.leader$.subscribe((leaderId) => report({ type: 'leader', atMs: now(), leaderId }));

  const workIntervalMs = config.workIntervalMs ?? 10;
  const work =
    workIntervalMs > 0
      ? setInterval(() => {
          // Stamp first, then read the token and check the lease: the check happens at or after
          // the stamp, so a true isLeader() proves the lease still ran at the stamp even if this
          // process is descheduled in between (a stamp taken after the check could fall past
          // the lease end by as long as the pause).
          const atMs = now();
          const token = elector.token;
          if (token !== null && elector.isLeader()) report({ type: 'work', atMs, token });
        }, workIntervalMs)
      : null;

  // Guarded writes: one in flight at a time, only while isLeader(), with the current token.
  const guard = config.guard ? openGuard(config.guard) : null;
  let guardTimer: NodeJS.Timeout | null = null;
  let writing: Promise<void> | null = null;
  let stopping = false;
  const guardTick = () => {
    guardTimer = null;
    if (stopping || !guard) return;
    // Stamped before the check, as the work above.
    const atMs = now();
    const token = elector.token;
    if (token !== null && elector.isLeader() && !writing) {
      writing = guard
        .write(token, config.candidateId)
        .then(
          (v) => report({ type: 'write', atMs, doneAtMs: now(), token, accepted: v.accepted, seq: v.seq }),
          (err: unknown) =>
            report({ type: 'write', atMs, doneAtMs: now(), token, accepted: false, seq: null, error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => {
          writing = null;
        });
    }
    guardTimer = setTimeout(guardTick, config.guard!.intervalMs ?? 20);
  };
  if (guard) guardTimer = setTimeout(guardTick, 0);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (work) clearInterval(work);
    if (guardTimer) clearTimeout(guardTimer);
    await elector.stop();
    await writing;
    await guard?.close();
    await backend.close();
    report({ type: 'stopped', atMs: now() });
    process.disconnect?.();
  };
  process.on('message', (command: CandidateCommand) => {
    if (command.type === 'stop') void stop();
    else if (command.type === 'stepDown') void elector.stepDown();
    else if (command.type === 'pause') elector.pause();
    else if (command.type === 'resume') elector.resume();
  });
  process.on('SIGTERM', () => void stop());
  // The parent went away: leave the election rather than lead an orphaned test.
  process.on('disconnect', () => void stop());
  await elector.start();
  // The instance id, where the Elector has one: a duplicate of this candidate id campaigns under another.
  const instanceId = (elector as { instanceId?: unknown }).instanceId;
  report({ type: 'ready', atMs: now(), pid: process.pid, ...(typeof instanceId === 'string' ? { instanceId } : {}) });
}

main().catch((err: unknown) => {
  report({ type: 'error', atMs: now(), message: err instanceof Error ? err.message : String(err) });
  process.exitCode = 1;
});
