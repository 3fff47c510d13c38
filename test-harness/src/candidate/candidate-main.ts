/**
 * One Elector in its own process, for fault tests and benchmarks. Started by `CandidateProcess`
 * with `fork()`; reports every transition and every unit of work to the parent over IPC,
 * timestamped on the system monotonic clock. Work is done only while `isLeader()` is true, the
 * way a user's code should guard it.
 */
import { Elector } from '@conclave/core';
import { createBackend } from '@conclave/cli';
import type { CandidateCommand, CandidateConfig, CandidateReport } from './candidate-protocol';

const now = () => Number(process.hrtime.bigint()) / 1e6;
const report = (message: CandidateReport) => {
  if (process.connected) process.send!(message);
};

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CONCLAVE_CANDIDATE ?? '') as CandidateConfig;
  const backend = createBackend(config.backend);
  const elector = new Elector({
    backend,
    election: config.election,
    candidateId: config.candidateId,
    leaseMs: config.leaseMs,
    ...(config.renewMs ? { renewMs: config.renewMs } : {}),
    ...(config.retryMs ? { retryMs: config.retryMs } : {}),
  });
  elector.elected$.subscribe((e) => report({ type: 'elected', atMs: now(), token: e.token }));
  elector.revoked$.subscribe((e) => report({ type: 'revoked', atMs: now(), token: e.token, reason: e.reason }));
  elector.leader$.subscribe((leaderId) => report({ type: 'leader', atMs: now(), leaderId }));

  const workIntervalMs = config.workIntervalMs ?? 10;
  const work =
    workIntervalMs > 0
      ? setInterval(() => {
          // Read the token and check the lease in the same instant the work is stamped.
          const token = elector.token;
          if (token !== null && elector.isLeader()) report({ type: 'work', atMs: now(), token });
        }, workIntervalMs)
      : null;

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (work) clearInterval(work);
    await elector.stop();
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
  report({ type: 'ready', atMs: now(), pid: process.pid });
}

main().catch((err: unknown) => {
  report({ type: 'error', atMs: now(), message: err instanceof Error ? err.message : String(err) });
  process.exitCode = 1;
});
