import { BehaviorSubject, Observable, Subject, distinctUntilChanged, map } from 'rxjs';
import type { ElectedEvent, LeadershipState, RevokedEvent } from './elector-types';
import type { ElectorMetrics } from './metrics';

const STOPPED: LeadershipState = Object.freeze({ role: 'stopped', leaderId: null, token: null });

/**
 * What an Elector tells its subscribers: the state snapshot and its streams, and the elected and
 * revoked events. A role change is also counted as a `conclave.transitions` metric.
 *
 * The subjects and streams are made on first use: a process that runs thousands of elections
 * often reads none of them, and each costs a few hundred bytes. A stream made late misses
 * nothing a subscriber could have seen: the state stream starts from the current state, and the
 * event streams replay nothing anyway.
 */
export class LeadershipSignals {
  private current: LeadershipState = STOPPED;
  private stateSubject: BehaviorSubject<LeadershipState> | null = null;
  private electedSubject: Subject<ElectedEvent> | null = null;
  private revokedSubject: Subject<RevokedEvent> | null = null;
  private streams: {
    state$?: Observable<LeadershipState>;
    isLeader$?: Observable<boolean>;
    leader$?: Observable<string | null>;
    elected$?: Observable<ElectedEvent>;
    revoked$?: Observable<RevokedEvent>;
  } | null = null;

  constructor(private readonly metrics: ElectorMetrics) {}

  get state$(): Observable<LeadershipState> {
    const streams = (this.streams ??= {});
    return (streams.state$ ??= (this.stateSubject ??= new BehaviorSubject(this.current)).asObservable());
  }

  get isLeader$(): Observable<boolean> {
    const streams = (this.streams ??= {});
    return (streams.isLeader$ ??= this.state$.pipe(
      map((s) => s.role === 'leader'),
      distinctUntilChanged(),
    ));
  }

  get leader$(): Observable<string | null> {
    const streams = (this.streams ??= {});
    return (streams.leader$ ??= this.state$.pipe(
      map((s) => s.leaderId),
      distinctUntilChanged(),
    ));
  }

  get elected$(): Observable<ElectedEvent> {
    const streams = (this.streams ??= {});
    return (streams.elected$ ??= (this.electedSubject ??= new Subject()).asObservable());
  }

  get revoked$(): Observable<RevokedEvent> {
    const streams = (this.streams ??= {});
    return (streams.revoked$ ??= (this.revokedSubject ??= new Subject()).asObservable());
  }

  get state(): LeadershipState {
    return this.current;
  }

  /** Emits `next`, a change (the state machine publishes changes only); a new role is counted. */
  publish(next: LeadershipState): void {
    if (this.current.role !== next.role) this.metrics.transition(next.role, next.reason);
    this.current = next;
    this.stateSubject?.next(next);
  }

  elected(event: ElectedEvent): void {
    this.electedSubject?.next(event);
  }

  revoked(event: RevokedEvent): void {
    this.revokedSubject?.next(event);
  }
}
