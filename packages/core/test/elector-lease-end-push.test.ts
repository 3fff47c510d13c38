/**
 * A backend that pushes lease ends (`changes.leaseEnds`): the Elector's wiring of
 * `onLeaseEndPushed`. The memory backend, told to push each confirmed renewal's new end to the
 * election's watchers, as Redis does from keyspace events.
 */
import { performance } from 'node:perf_hooks';
import { Elector, MemoryBackend } from '@conclave/core';
import type { CampaignRequest, CampaignResult, ChangeFeed, LeaseEndHint, RenewRequest, RenewResult } from '@conclave/core/spi';
import { waitFor } from '@conclave/test-harness';
import { StepTimer } from '../src/step-timer';

class LeaseEndPushingBackend extends MemoryBackend {
  /** The memory backend's own feed (read before it is overridden below). */
  private readonly plainChanges: ChangeFeed = (this as unknown as { changes: ChangeFeed }).changes;
  /** Pushes lease ends unless `leaseEnds` is set to false (hints are then plain changes). */
  leaseEnds = true;
  override readonly changes: ChangeFeed = this.pushingFeed();
  /** Off: renewals are no longer pushed (a dead subscription, as followers see it). */
  pushing = true;
  readonly campaigns = new Map<string, number>();
  private readonly pushTo = new Map<string, Set<(hint?: LeaseEndHint) => void>>();

  override async campaign(request: CampaignRequest): Promise<CampaignResult> {
    const id = request.candidateId.split(' ')[0]!;
    this.campaigns.set(id, (this.campaigns.get(id) ?? 0) + 1);
    return super.campaign(request);
  }

  override async renew(request: RenewRequest): Promise<RenewResult> {
    const result = await super.renew(request);
    if (result.held && this.pushing) {
      for (const push of this.pushTo.get(request.election) ?? []) push({ leaseRemainingMs: result.leaseMs });
    }
    return result;
  }

  private pushingFeed(): ChangeFeed {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const backend = this;
    return {
      delivery: 'best-effort',
      get leaseEnds() {
        return backend.leaseEnds;
      },
      watch: (election, candidateId, onChange) => this.watchPushing(election, candidateId, onChange),
    };
  }

  private watchPushing(election: string, candidateId: string, onChange: (hint?: LeaseEndHint) => void): () => void {
    const unwatch = this.plainChanges.watch(election, candidateId, onChange);
    const set = this.pushTo.get(election) ?? new Set();
    this.pushTo.set(election, set);
    set.add(onChange);
    return () => {
      set.delete(onChange);
      unwatch();
    };
  }

  campaignsOf(id: string): number {
    return this.campaigns.get(id) ?? 0;
  }
}

const electors: Elector[] = [];
afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

function start(backend: MemoryBackend, candidateId: string): Elector {
  // renewMs 300, retryMs 180: without pushes a follower would look at least every 300 ms.
  const e = new Elector({ backend, election: 'pushed', candidateId, leaseMs: 900, logger: null });
  electors.push(e);
  return e;
}

test('a follower told of every renewal makes no campaign while the leader renews', async () => {
  const backend = new LeaseEndPushingBackend();
  const a = start(backend, 'a');
  await a.start();
  const b = start(backend, 'b');
  await b.start();
  expect(a.isLeader()).toBe(true);
  const before = backend.campaignsOf('b');
  await new Promise((r) => setTimeout(r, 2000));
  expect(backend.campaignsOf('b')).toBe(before);
  expect(a.isLeader()).toBe(true);
});

test('a follower moves its look once per lease end it reaches, not at every renewal pushed', async () => {
  const backend = new LeaseEndPushingBackend();
  const a = start(backend, 'a');
  await a.start();
  const b = start(backend, 'b');
  await b.start();
  const arm = jest.spyOn(StepTimer.prototype, 'arm');
  try {
    await new Promise((r) => setTimeout(r, 2100));
    // Arms per timer: the leader's renewals (every 300 ms), the follower's looks (every 900 ms or so).
    const perTimer = new Map<unknown, number>();
    for (const timer of arm.mock.contexts) perTimer.set(timer, (perTimer.get(timer) ?? 0) + 1);
    const counts = [...perTimer.values()].sort((x, y) => x - y);
    expect(counts).toHaveLength(2);
    // Seven renewals pushed; re-armed at each, the follower's timer would count as many.
    expect(counts[1]).toBeGreaterThanOrEqual(6);
    expect(counts[0]).toBeLessThanOrEqual(3);
    expect(backend.campaignsOf('b')).toBe(1);
  } finally {
    arm.mockRestore();
  }
});

test('without lease ends declared, the same hints are plain changes: the follower campaigns at each one', async () => {
  const backend = new LeaseEndPushingBackend();
  backend.leaseEnds = false;
  const a = start(backend, 'a');
  await a.start();
  const b = start(backend, 'b');
  await b.start();
  const before = backend.campaignsOf('b');
  await new Promise((r) => setTimeout(r, 1000));
  // A renewal every 300 ms, each a change to look at.
  expect(backend.campaignsOf('b') - before).toBeGreaterThanOrEqual(3);
});

test('when the pushes stop, the follower looks again within a lease of the last one; a release still hands over at once', async () => {
  const backend = new LeaseEndPushingBackend();
  const a = start(backend, 'a');
  await a.start();
  const b = start(backend, 'b');
  await b.start();
  await new Promise((r) => setTimeout(r, 1000));
  const quiet = backend.campaignsOf('b');
  backend.pushing = false;
  await new Promise((r) => setTimeout(r, 1000));
  // Within a lease of the last push it looked, and goes on looking at each lease end.
  expect(backend.campaignsOf('b')).toBeGreaterThan(quiet);
  // A release is a change, pushed as before: the follower takes over long before a lease.
  const stoppedAt = performance.now();
  await a.pause();
  await waitFor(() => b.isLeader(), 'b to take over', 3000);
  expect(performance.now() - stoppedAt).toBeLessThan(600);
});
