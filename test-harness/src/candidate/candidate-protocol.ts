/** What a candidate process is told to do, as JSON in its CONCLAVE_CANDIDATE environment variable. */
export interface CandidateConfig {
  /** Backend URL, as `createBackend` takes it (`mysql://…`, `redis://…`, `zookeeper://…`, …). */
  backend: string;
  election: string;
  candidateId: string;
  leaseMs: number;
  renewMs?: number;
  retryMs?: number;
  /** A unit of work is attempted this often, ms; done only while `isLeader()`. Default 10. 0 = no work. */
  workIntervalMs?: number;
}

/** Messages from the parent to a candidate (over the IPC channel). */
export type CandidateCommand = { type: 'stop' } | { type: 'stepDown' } | { type: 'pause' } | { type: 'resume' };

/** Messages from a candidate to the parent. `atMs` is process.hrtime.bigint() in ms: one clock for all processes. */
export type CandidateReport =
  | { type: 'ready'; atMs: number; pid: number }
  | { type: 'elected'; atMs: number; token: number }
  | { type: 'revoked'; atMs: number; token: number; reason: string }
  | { type: 'leader'; atMs: number; leaderId: string | null }
  | { type: 'work'; atMs: number; token: number }
  | { type: 'stopped'; atMs: number }
  | { type: 'error'; atMs: number; message: string };
