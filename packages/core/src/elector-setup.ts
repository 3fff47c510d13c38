/** What the constructor of an Elector settles, and the pieces that run it share: never changed. */
import type { ElectionBackend } from './backend';
import type { ResolvedElectorOptions } from './elector-options';
import type { Logger } from './logger';

/** The fields every log line of an Elector carries. */
export interface LogContext {
  election: string;
  candidate: string;
  backend: string;
}

/** What the constructor settles: names, backend, options, logger. */
export interface ElectorSetup {
  readonly election: string;
  readonly candidateId: string;
  /** What leases are held under (see instance-id.ts). */
  readonly instanceId: string;
  readonly backend: ElectionBackend;
  readonly options: Readonly<ResolvedElectorOptions>;
  readonly log: Logger;
  /** A fresh `LogContext` object for each line. */
  context(): LogContext;
}
