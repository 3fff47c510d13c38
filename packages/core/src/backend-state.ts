import { Observable, Subject } from 'rxjs';

/**
 * Whether an Elector can talk to its backend, as seen from the outcomes of its own calls (in the
 * spirit of Apache Curator's connection states):
 * - `connected`: the first call after `start()` was answered;
 * - `suspended`: a call failed (refused, errored or timed out); a lease held may still be running,
 *   and `isLeader()` stays true until its deadline;
 * - `lost`: no call has been answered for longer than `leaseMs`, or leadership was given up because
 *   a renewal could not be confirmed in time;
 * - `reconnected`: a call was answered again after `suspended` or `lost`.
 */
export type BackendState = 'connected' | 'suspended' | 'lost' | 'reconnected';

/** Turns call outcomes into `BackendState` changes; one per Elector. */
export class BackendStateTracker {
  private current: BackendState | null = null;
  /** Whether any call was answered since start: the first answer is `connected`, later ones `reconnected`. */
  private answeredOnce = false;
  /** Made on first use of `changes$`: most Electors of a process of thousands are never observed. */
  private subject: Subject<BackendState> | null = null;
  private stream: Observable<BackendState> | null = null;
  /** Told of every change before the stream (the unreachable warning), without a subscription each. */
  /** Told every change (the unreachable warning): an object, not a closure per Elector. */
  private listener: { onState(state: BackendState): void } | null = null;

  /** Changes of the state. */
  get changes$(): Observable<BackendState> {
    return (this.stream ??= (this.subject ??= new Subject()).asObservable());
  }

  /** Tells `listener` every change from now on (one listener). */
  listen(listener: { onState(state: BackendState): void }): void {
    this.listener = listener;
  }

  /** The last state, or `null` before the first outcome after `start()`. */
  get state(): BackendState | null {
    return this.current;
  }

  /** A call was answered. */
  answered(): void {
    if (!this.answeredOnce) {
      this.answeredOnce = true;
      this.set('connected');
    } else if (this.current === 'suspended' || this.current === 'lost') this.set('reconnected');
  }

  /** A call failed; `silentForMs` is how long since the last answer. */
  failed(silentForMs: number, leaseMs: number): void {
    if (silentForMs > leaseMs) this.gaveUp();
    else if (this.current !== 'suspended' && this.current !== 'lost') this.set('suspended');
  }

  /** The backend has been out of reach for too long: for a lease, or past a leader's deadline. */
  gaveUp(): void {
    if (this.current !== 'lost') this.set('lost');
  }

  /** Forgets the state (on stop): the next start reports `connected` afresh. */
  reset(): void {
    this.current = null;
    this.answeredOnce = false;
  }

  private set(next: BackendState): void {
    this.current = next;
    this.listener?.onState(next);
    this.subject?.next(next);
  }
}
