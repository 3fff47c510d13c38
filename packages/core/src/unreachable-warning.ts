import type { BackendState } from './backend-state';
import { redactText } from './redact-url';

/** What the warning needs to know about one Elector (its `BackendCalls` fits). */
export interface UnreachableSource {
  readonly election: string;
  /** The backend object: elections sharing it share one warning. */
  readonly backend: object;
  /** Failed calls in a row. */
  readonly failures: number;
  /** The error of the last failed call. */
  readonly lastFailure: unknown;
}

const lostByBackend = new WeakMap<object, Set<UnreachableSource>>();

function toStderr(line: string): void {
  process.stderr.write(line + '\n');
}

/**
 * The default when no logger is given: one line on stderr when an Elector's backend has not
 * answered for longer than a lease (`lost`), and one when it answers again; nothing otherwise.
 * Passwords in error messages are masked. Elections sharing a backend share one warning. A plain
 * object per Elector, fed by `onState`: a process may hold thousands.
 */
export class UnreachableWarning {
  private readonly lost: Set<UnreachableSource>;

  constructor(
    private readonly source: UnreachableSource,
    private readonly backendKind: string,
    private readonly write: (line: string) => void = toStderr,
  ) {
    let lost = lostByBackend.get(source.backend);
    if (!lost) lostByBackend.set(source.backend, (lost = new Set()));
    this.lost = lost;
  }

  /** The Elector's backend state changed. */
  onState(state: BackendState): void {
    const { source, lost } = this;
    if (state === 'lost' && !lost.has(source)) {
      lost.add(source);
      if (lost.size > 1) return;
      const err = source.lastFailure;
      const why = err === null || err === undefined ? 'no answer' : `last error: ${err instanceof Error ? err.message : String(err)}`;
      this.write(
        redactText(
          `conclave warn: the ${this.backendKind} backend of election "${source.election}" has not answered for more than a lease ` +
            `(${source.failures} failed calls; ${why}). Pass a logger for details, or logger: null to silence this.`,
        ),
      );
    } else if ((state === 'connected' || state === 'reconnected') && lost.delete(source) && lost.size === 0) {
      this.write(`conclave info: the ${this.backendKind} backend of election "${source.election}" answers again.`);
    }
  }

  /** On stop(): a stopped Elector no longer counts as an outage. */
  forget(): void {
    this.lost.delete(this.source);
  }
}
