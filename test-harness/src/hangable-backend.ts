import {
  ConclaveError,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';

/**
 * Wraps a backend so that a test can make it hang, as if the network to the server went silent:
 * after `hang()`, every call returns a promise that does not settle and never reaches the server,
 * and change hints are dropped. `unhang()` rejects the calls held so far with
 * `BACKEND_UNAVAILABLE` and lets new calls through again.
 */
export class HangableBackend implements ElectionBackend {
  readonly kind: string;
  readonly capabilities: ElectionBackend['capabilities'];
  readonly listCandidates?: (election: string) => Promise<string[]>;
  readonly raiseTokenFloor?: (election: string, token: number) => Promise<void>;
  private hanging = false;
  private held: Array<(err: Error) => void> = [];

  constructor(readonly inner: ElectionBackend) {
    this.kind = inner.kind;
    this.capabilities = inner.capabilities;
    if (inner.listCandidates) this.listCandidates = (election) => this.call(() => inner.listCandidates!(election));
    if (inner.raiseTokenFloor) {
      this.raiseTokenFloor = (election, token) => this.call(() => inner.raiseTokenFloor!(election, token));
    }
  }

  get isHanging(): boolean {
    return this.hanging;
  }

  hang(): void {
    this.hanging = true;
  }

  unhang(): void {
    this.hanging = false;
    const held = this.held;
    this.held = [];
    for (const reject of held) {
      reject(new ConclaveError('BACKEND_UNAVAILABLE', 'call was held by a hung connection', { backend: this.kind }));
    }
  }

  campaign(request: CampaignRequest): Promise<CampaignResult> {
    return this.call(() => this.inner.campaign(request));
  }

  renew(request: RenewRequest): Promise<RenewResult> {
    return this.call(() => this.inner.renew(request));
  }

  release(request: ReleaseRequest): Promise<void> {
    return this.call(() => this.inner.release(request));
  }

  getLeader(election: string): Promise<LeaderInfo | null> {
    return this.call(() => this.inner.getLeader(election));
  }

  forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    return this.call(() => this.inner.forceLeader(election, candidateId, leaseMs));
  }

  clearLeader(election: string): Promise<void> {
    return this.call(() => this.inner.clearLeader(election));
  }

  get watch(): ElectionBackend['watch'] {
    const inner = this.inner;
    if (!inner.watch) return undefined;
    return (election, candidateId, onChange) =>
      inner.watch!(election, candidateId, () => {
        if (!this.hanging) onChange();
      });
  }

  get isWatching(): ElectionBackend['isWatching'] {
    const inner = this.inner;
    if (!inner.isWatching) return undefined;
    return (election, candidateId) => !this.hanging && inner.isWatching!(election, candidateId);
  }

  close(): Promise<void> {
    this.unhang();
    return this.inner.close();
  }

  private call<T>(op: () => Promise<T>): Promise<T> {
    if (!this.hanging) return op();
    return new Promise<T>((_resolve, reject) => {
      this.held.push(reject);
    });
  }
}
