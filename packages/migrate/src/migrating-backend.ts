import {
  assertCandidateId,
  assertInstanceId,
  assertElectionName,
  type BackendCapabilities,
  type CampaignRequest,
  type CampaignResult,
  type ElectionBackend,
  type LeaderInfo,
  type ReleaseRequest,
  type RenewRequest,
  type RenewResult,
} from '@conclave/core';
import { resolveMigratingOptions, type MigratingBackendOptions, type MigrationPhase } from './migration-options';

const KIND = 'migrate';

/** The two leases a dual candidate holds for one term. */
interface DualTerm {
  fromToken: number;
  toToken: number;
}

/**
 * A backend made of two backends, for moving an election from `from` to `to` one process at a
 * time with never two leaders (seed 000 warns that a ZooKeeper → MySQL switch can make two).
 *
 * In `dual`, a candidate leads only while it holds the lease on both backends: taken from → to,
 * given back to → from. Whoever leads in a fleet of `from-only` + `dual` nodes holds `from`;
 * whoever leads in a fleet of `dual` + `to-only` nodes holds `to`; so at every step of the
 * rollout one lease excludes a second leader.
 *
 * Fencing tokens: a dual term's token is `to`'s token, and before taking `to` a dual candidate
 * raises `to`'s token floor to its `from` token − 1 (`raiseTokenFloor`). While `to` is fresh (the
 * usual case: only dual nodes have used it), a dual term's token therefore *equals* its `from`
 * token, so dual and `from-only` nodes share `from`'s increasing sequence; once `to-only` nodes
 * take part, every leader holds `to` and `to`'s sequence increases by itself. After taking `to`,
 * a dual candidate also raises `from`'s floor to its token where `from` supports it, so a
 * rollback to `from-only` keeps increasing too. See the README for the rule this relies on at
 * the dual → to-only step, and for pairs whose `to` cannot raise its floor.
 */
export class MigratingBackend implements ElectionBackend {
  readonly kind = KIND;
  readonly capabilities: BackendCapabilities;
  readonly phase: MigrationPhase;
  readonly from: ElectionBackend;
  readonly to: ElectionBackend;

  private readonly closeBackends: boolean;
  /** Terms this backend's candidates hold in `dual`, by election and candidate. */
  private readonly terms = new Map<string, DualTerm>();

  /** Throws `INVALID_OPTIONS` for bad options; does no I/O. */
  constructor(options: MigratingBackendOptions) {
    const resolved = resolveMigratingOptions(options);
    this.from = resolved.from;
    this.to = resolved.to;
    this.phase = resolved.phase;
    this.closeBackends = resolved.closeBackends;
    this.capabilities = this.phase === 'dual' ? dualCapabilities(this.from, this.to) : this.single().capabilities;
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    if (this.phase !== 'dual') return this.single().campaign(request);
    const { election, candidateId } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.terms.get(key);

    const onFrom = await this.from.campaign(request);
    if (onFrom.role === 'follower') {
      if (held) {
        // We lost `from`: give `to` back at once rather than block the next dual leader for a lease.
        this.terms.delete(key);
        await this.to.release({ election, candidateId, token: held.toToken });
      }
      return onFrom;
    }
    if (!held && this.to.capabilities.tokenFloor && this.to.raiseTokenFloor) {
      await this.to.raiseTokenFloor(election, Math.max(0, onFrom.token - 1));
    }
    const onTo = await this.to.campaign(request);
    if (onTo.role === 'follower') {
      // We keep `from` (a dual or to-only node leads on `to`); campaigning again renews it.
      if (held) this.terms.delete(key);
      return onTo;
    }
    if (!held || held.toToken !== onTo.token) {
      if (this.from.capabilities.tokenFloor && this.from.raiseTokenFloor) {
        await this.from.raiseTokenFloor(election, onTo.token);
      }
    }
    this.terms.set(key, { fromToken: onFrom.token, toToken: onTo.token });
    return { role: 'leader', token: onTo.token, leaseMs: Math.min(onFrom.leaseMs, onTo.leaseMs) };
  }

  async renew(request: RenewRequest): Promise<RenewResult> {
    if (this.phase !== 'dual') return this.single().renew(request);
    const { election, candidateId, token, leaseMs } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.terms.get(key);
    if (!held || held.toToken !== token) return { held: false, leaderId: null };
    const [onFrom, onTo] = await Promise.all([
      this.from.renew({ election, candidateId, token: held.fromToken, leaseMs }),
      this.to.renew({ election, candidateId, token: held.toToken, leaseMs }),
    ]);
    if (onFrom.held && onTo.held) return { held: true, leaseMs: Math.min(onFrom.leaseMs, onTo.leaseMs) };
    this.terms.delete(key);
    return { held: false, leaderId: (!onFrom.held ? onFrom.leaderId : null) ?? (!onTo.held ? onTo.leaderId : null) };
  }

  async release(request: ReleaseRequest): Promise<void> {
    if (this.phase !== 'dual') return this.single().release(request);
    const { election, candidateId, token } = request;
    validate(election, candidateId);
    const key = termKey(election, candidateId);
    const held = this.terms.get(key);
    // A release for an older term than the one we hold must not touch the newer term's `from`.
    const sameTerm = token == null || held?.toToken === token;
    if (sameTerm) this.terms.delete(key);
    await this.to.release({ election, candidateId, token: token ?? null });
    if (sameTerm) await this.from.release({ election, candidateId, token: held?.fromToken ?? null });
  }

  /** In `dual`, the leader the old fleet sees: `from`'s. */
  getLeader(election: string): Promise<LeaderInfo | null> {
    return (this.phase === 'to-only' ? this.to : this.from).getLeader(election);
  }

  async forceLeader(election: string, candidateId: string, leaseMs?: number): Promise<LeaderInfo> {
    if (this.phase !== 'dual') return this.single().forceLeader(election, candidateId, leaseMs);
    validate(election, candidateId);
    assertCandidateId(candidateId, KIND, election);
    const onFrom = await this.from.forceLeader(election, candidateId, leaseMs);
    if (this.to.capabilities.tokenFloor && this.to.raiseTokenFloor) {
      await this.to.raiseTokenFloor(election, Math.max(0, onFrom.token - 1));
    }
    return this.to.forceLeader(election, candidateId, leaseMs);
  }

  async clearLeader(election: string): Promise<void> {
    if (this.phase !== 'dual') return this.single().clearLeader(election);
    validate(election);
    await this.to.clearLeader(election);
    await this.from.clearLeader(election);
  }

  get listCandidates(): ((election: string) => Promise<string[]>) | undefined {
    const side = this.phase === 'to-only' ? this.to : this.from;
    return side.listCandidates && side.capabilities.listCandidates ? (election) => side.listCandidates!(election) : undefined;
  }

  get watch(): ElectionBackend['watch'] {
    const sides = (this.phase === 'dual' ? [this.from, this.to] : [this.single()]).filter(
      (b) => b.watch && b.capabilities.push !== 'none',
    );
    if (sides.length === 0) return undefined;
    return (election, candidateId, onChange) => {
      const unwatches = sides.map((b) => b.watch!(election, candidateId, onChange));
      return () => unwatches.forEach((unwatch) => unwatch());
    };
  }

  get isWatching(): ElectionBackend['isWatching'] {
    const sides = this.phase === 'dual' ? [this.from, this.to] : [this.single()];
    if (!sides.some((b) => b.isWatching)) return undefined;
    return (election, candidateId) => sides.every((b) => !b.isWatching || b.isWatching(election, candidateId));
  }

  get raiseTokenFloor(): ElectionBackend['raiseTokenFloor'] {
    if (this.phase === 'dual') return undefined;
    const side = this.single();
    return side.raiseTokenFloor ? (election, token) => side.raiseTokenFloor!(election, token) : undefined;
  }

  async close(): Promise<void> {
    this.terms.clear();
    if (this.closeBackends) await Promise.all([this.from.close(), this.to.close()]);
  }

  /** The one backend used outside `dual`. */
  private single(): ElectionBackend {
    return this.phase === 'to-only' ? this.to : this.from;
  }
}

function dualCapabilities(from: ElectionBackend, to: ElectionBackend): BackendCapabilities {
  const pushes = [from, to].map((b) => (b.watch ? b.capabilities.push : 'none'));
  const push = pushes.every((p) => p === 'reliable') ? 'reliable' : pushes.some((p) => p !== 'none') ? 'best-effort' : 'none';
  return { listCandidates: from.capabilities.listCandidates, push, tokenFloor: false };
}

// A rest parameter, not an optional one: an explicit `undefined` id must be refused too.
function validate(election: string, ...candidate: [candidateId?: string]): void {
  assertElectionName(election, KIND);
  if (candidate.length > 0) assertInstanceId(candidate[0], KIND, election);
}

function termKey(election: string, candidateId: string): string {
  return `${election}\u0000${candidateId}`;
}
