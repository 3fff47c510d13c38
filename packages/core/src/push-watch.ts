import { performance } from 'node:perf_hooks';
import type { LeaseEndHint } from './backend';
import { capabilityOf, supports } from './capabilities';
import { onChangePushed, onLeaseEndPushed } from './elector-pacing';
import type { ElectorSetup, Standing } from './elector-standing';
import type { StepRunner } from './step-runner';

/**
 * Changes an Elector learns by push: a backend with the `push` capability calls back when the
 * election changes, and the callback wakes the loop (elector-pacing.ts says when). Without push,
 * or when subscribing fails, the loop polls instead.
 */
export class PushWatch {
  private unwatch: (() => void) | null = null;

  constructor(
    private readonly setup: ElectorSetup,
    private readonly standing: Standing,
    private readonly steps: StepRunner,
  ) {}

  /** Subscribes to the election's changes, when the backend pushes them. */
  start(): void {
    const { backend, election, instanceId } = this.setup;
    if (!supports(backend, 'push')) return;
    try {
      this.unwatch = backend.watch!(election, instanceId, (hint) => this.changed(hint));
    } catch (err) {
      // Without push the core polls at retryMs: slower hand-over, same safety.
      this.setup.log.warn({ ...this.setup.context(), err }, 'watch failed; polling instead');
    }
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = null;
  }

  /** Whether changes of this election reach us by push right now (see ElectionBackend.isWatching). */
  active(): boolean {
    if (this.unwatch === null) return false;
    const { backend, election, instanceId } = this.setup;
    if (!backend.isWatching) return true;
    try {
      return backend.isWatching(election, instanceId);
    } catch {
      return false;
    }
  }

  /**
   * The backend says the election changed (or a step waited for the call in flight), or, with a
   * hint from a backend that declares `leaseEndPush`, only that the current lease has a new end.
   */
  changed(hint?: LeaseEndHint): void {
    const { role, holdOffUntil } = this.standing;
    if (role !== 'follower' && role !== 'leader') return;
    const { backend, options } = this.setup;
    if (hint !== undefined && supports(backend, 'leaseEndPush')) {
      // Pacing only: a call in flight will arm the next step from its own answer.
      if (this.steps.busy || !(hint.leaseRemainingMs >= 0 && Number.isFinite(hint.leaseRemainingMs))) return;
      const next = onLeaseEndPushed(
        {
          role,
          nowMs: performance.now(),
          leaseRemainingMs: hint.leaseRemainingMs,
          push: capabilityOf(backend, 'push'),
          watching: this.active(),
          leaseEndLook: this.steps.leaseEndLook,
          holdOffUntilMs: holdOffUntil,
        },
        options,
      );
      if (next) {
        this.steps.follow(next);
        // Still the look at the lease's end, only moved: the next push may move it again.
        this.steps.leaseEndLook = true;
      }
      return;
    }
    if (this.steps.deferIfBusy()) return;
    this.steps.follow(onChangePushed({ role, nowMs: performance.now(), holdOffUntilMs: holdOffUntil }));
  }
}
