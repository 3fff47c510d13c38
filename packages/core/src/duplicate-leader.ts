import type { ElectorSetup } from './elector-setup';
import { candidateOf } from './instance-id';

/**
 * Tracks whether the leader a backend names is another instance with our candidate id. Such a
 * duplicate cannot share our term (each instance holds leases under its own id), but it is a
 * deployment mistake worth saying: a warning when it starts, a `health()` problem while it lasts.
 */
export class DuplicateLeader {
  /** The instance id of another Elector with our candidate id that leads, while one does. */
  current: string | null = null;

  constructor(private readonly setup: ElectorSetup) {}

  /** The backend named `leaderInstance` as leader (`null`: nobody, or this Elector itself leads). */
  notice(leaderInstance: string | null): void {
    const { candidateId, instanceId } = this.setup;
    const duplicate =
      leaderInstance !== null && leaderInstance !== instanceId && candidateOf(leaderInstance) === candidateId
        ? leaderInstance
        : null;
    if (duplicate !== null && this.current === null) {
      this.setup.log.warn(
        { ...this.setup.context(), instance: instanceId, leaderInstance: duplicate },
        'another Elector with this candidate id leads this election; candidate ids should be unique',
      );
    }
    this.current = duplicate;
  }

  forget(): void {
    this.current = null;
  }
}
