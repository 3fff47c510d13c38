import type { LeaseEndHint } from './backend';
import { supports } from './capabilities';
import type { ElectorSetup } from './elector-setup';

/**
 * The subscription to an election's changes, when the backend pushes them (the `push`
 * capability). Without push, or when subscribing fails, the Elector polls instead.
 */
export class PushWatch {
  private unwatch: (() => void) | null = null;

  constructor(
    private readonly setup: ElectorSetup,
    private readonly onChange: (hint?: LeaseEndHint) => void,
  ) {}

  start(): void {
    const { backend, election, instanceId } = this.setup;
    if (!supports(backend, 'push')) return;
    try {
      this.unwatch = backend.watch!(election, instanceId, (hint) => this.onChange(hint));
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
}
