import { BehaviorSubject, Observable, Subject, distinctUntilChanged, map } from 'rxjs';
import type { ElectedEvent, LeadershipState, RevokedEvent } from './elector-types';
import type { ElectorMetrics } from './metrics';

/**
 * What an Elector tells its subscribers: the state snapshot and its streams, and the elected and
 * revoked events. A role change is also counted as a `conclave.transitions` metric.
 */
export class LeadershipSignals {
  readonly state$: Observable<LeadershipState>;
  readonly isLeader$: Observable<boolean>;
  readonly leader$: Observable<string | null>;
  readonly elected$: Observable<ElectedEvent>;
  readonly revoked$: Observable<RevokedEvent>;

  private readonly stateSubject = new BehaviorSubject<LeadershipState>({ role: 'stopped', leaderId: null, token: null });
  private readonly electedSubject = new Subject<ElectedEvent>();
  private readonly revokedSubject = new Subject<RevokedEvent>();

  constructor(private readonly metrics: ElectorMetrics) {
    this.state$ = this.stateSubject.asObservable();
    this.isLeader$ = this.state$.pipe(
      map((s) => s.role === 'leader'),
      distinctUntilChanged(),
    );
    this.leader$ = this.state$.pipe(
      map((s) => s.leaderId),
      distinctUntilChanged(),
    );
    this.elected$ = this.electedSubject.asObservable();
    this.revoked$ = this.revokedSubject.asObservable();
  }

  get state(): LeadershipState {
    return this.stateSubject.getValue();
  }

  /** Emits `next`, a change (the state machine publishes changes only); a new role is counted. */
  publish(next: LeadershipState): void {
    if (this.stateSubject.getValue().role !== next.role) this.metrics.transition(next.role, next.reason);
    this.stateSubject.next(next);
  }

  elected(event: ElectedEvent): void {
    this.electedSubject.next(event);
  }

  revoked(event: RevokedEvent): void {
    this.revokedSubject.next(event);
  }
}
