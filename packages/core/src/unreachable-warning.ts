import type { BackendState } from './backend-state';
import { redactText } from './redact-url';

/** What the warning needs to know about one Elector. */
export interface UnreachableSource {
  election: string;
  /** The backend object: elections sharing it share one warning. */
  backend: object;
  backendKind: string;
  /** Subscribes to the Elector's backend states (an Observable fits). */
  states: { subscribe(next: (state: BackendState) => void): unknown };
  failures(): number;
  lastError(): unknown;
}

// Elections whose backend is lost right now, per backend object: an outage of one backend is
// one problem, so it is one line, however many elections run on it.
const lostByBackend = new WeakMap<object, Set<UnreachableSource>>();

/**
 * The default when no logger is given: one line on stderr when an Elector's backend has not
 * answered for longer than a lease (`lost`), and one when it answers again; nothing otherwise.
 * Passwords in error messages are masked. Returns `forget`, for `stop()`: a stopped Elector no
 * longer counts as an outage.
 */
export function warnWhenUnreachable(
  source: UnreachableSource,
  write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
): { forget(): void } {
  const lost = lostByBackend.get(source.backend) ?? new Set<UnreachableSource>();
  lostByBackend.set(source.backend, lost);
  source.states.subscribe((state) => {
    if (state === 'lost' && !lost.has(source)) {
      lost.add(source);
      if (lost.size > 1) return;
      const err = source.lastError();
      const why = err === null || err === undefined ? 'no answer' : `last error: ${err instanceof Error ? err.message : String(err)}`;
      write(
        redactText(
          `conclave warn: the ${source.backendKind} backend of election "${source.election}" has not answered for more than a lease ` +
            `(${source.failures()} failed calls; ${why}). Pass a logger for details, or logger: null to silence this.`,
        ),
      );
    } else if ((state === 'connected' || state === 'reconnected') && lost.delete(source) && lost.size === 0) {
      write(`conclave info: the ${source.backendKind} backend of election "${source.election}" answers again.`);
    }
  });
  return { forget: () => void lost.delete(source) };
}
