import type { LeaseEndHint } from './backend';
import type { ElectorSetup } from './elector-setup';

/**
 * The subscription to an election's changes, when the backend pushes them (the `changes`
 * part). Without push, or when subscribing fails, the Elector polls instead.
 */
export class PushWatch {
  private unwatch: (() => void) | null = null;

  constructor(
    private readonly setup: ElectorSetup,
    private readonly onChange: (hint?: LeaseEndHint) => void,
  ) {}

  start(): void {
    const { backend, election, instanceId } = this.setup;
    const changes = backend.changes;
    if (changes === undefined) return;
    try {
      this.unwatch = changes.watch(election, instanceId, (hint) => this.onChange(hint));
    } catch (err) {
      // Without push the core polls at retryMs: slower hand-over, same safety.
      this.setup.log.warn({ ...this.setup.context(), err }, 'watch failed; polling instead');
    }
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = null;
  }

  /** Whether changes of this election reach us by push right now (see ChangeFeed.isWatching). */
  active(): boolean {
    if (this.unwatch === null) return false;
    const { backend, election, instanceId } = this.setup;
    const isWatching = backend.changes?.isWatching;
    if (!isWatching) return true;
    try {
      return isWatching(election, instanceId);
    } catch {
      return false;
    }
  }
}
