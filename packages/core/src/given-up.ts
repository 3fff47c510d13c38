import { ConclaveError } from './errors';

/**
 * For backends: rejects a call whose caller has already given up on it (its request's `signal`
 * is aborted), before anything is sent. See ElectionBackend, "Calls the core gives up on".
 */
export function throwIfGivenUp(signal: AbortSignal | undefined, what: string, backend: string, election: string): void {
  if (signal?.aborted) throw givenUpError(signal, what, backend, election);
}

/** The error for a call dropped, unsent, because its caller gave up on it. */
export function givenUpError(signal: AbortSignal, what: string, backend: string, election: string): ConclaveError {
  return new ConclaveError('BACKEND_UNAVAILABLE', `${what} not sent: the caller gave up on it`, {
    backend,
    election,
    cause: signal.reason,
  });
}

/**
 * Resolves when `signal` aborts (never without one); `dispose()` removes the listener, so a wait
 * that ended otherwise leaves nothing behind.
 */
export function whenGivenUp(signal: AbortSignal | undefined): { promise: Promise<void>; dispose(): void } {
  if (!signal) return { promise: new Promise<void>(() => undefined), dispose: () => undefined };
  let onAbort: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}
